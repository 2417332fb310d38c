import ChorusBackend
import ChorusDomain
import ChorusLog
import ChorusProjections
import Hummingbird
import NIOHTTP1

/// A failure as openapi.yaml shows it: a status and `{"error": {"code", "message"}}`. The one place where errors
/// become answers: routes and middleware throw it, and ``ErrorMiddleware`` makes one of every other error.
struct APIError: HTTPResponseError, Sendable {
    let status: HTTPResponse.Status
    let code: String
    let message: String
    /// Seconds, for `Retry-After`.
    var retryAfter: Int?

    init(_ status: HTTPResponse.Status, _ code: String, _ message: String, retryAfter: Int? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.retryAfter = retryAfter
    }

    static func badRequest(_ message: String) -> APIError { APIError(.badRequest, "bad_request", message) }
    static func unauthorized(_ message: String) -> APIError { APIError(.unauthorized, "unauthorized", message) }
    static func forbidden(_ message: String) -> APIError { APIError(.forbidden, "forbidden", message) }
    static func notFound(_ message: String) -> APIError { APIError(.notFound, "not_found", message) }
    static func tooLarge(_ message: String) -> APIError { APIError(.contentTooLarge, "too_large", message) }
    static func unsupportedMediaType(_ message: String) -> APIError {
        APIError(.unsupportedMediaType, "unsupported_media_type", message)
    }
    static func invalidImage(_ message: String) -> APIError {
        APIError(.unprocessableContent, "invalid_image", message)
    }
    static func imageTooLarge(_ message: String) -> APIError {
        APIError(.unprocessableContent, "image_too_large", message)
    }
    static func unavailable(_ message: String) -> APIError {
        APIError(.serviceUnavailable, "unavailable", message, retryAfter: 1)
    }

    /// A refused command, with the status openapi.yaml gives its code.
    init(_ error: DomainError) {
        let status: HTTPResponse.Status =
            switch error.code {
            case .invalidCredentials: .unauthorized
            case .forbidden, .blocked, .suspended, .repliesRestricted, .privateAccount: .forbidden
            case .notFound: .notFound
            case .gone: .gone
            case .emailTaken, .handleTaken, .idempotencyConflict: .conflict
            case .invalidEmail, .weakPassword, .invalidField, .emptyText, .textTooLong, .unknownUser, .unknownPost,
                .unknownMedia, .selfFollow, .selfMessage, .wrongPassword, .invalidToken, .invalidHandle:
                .unprocessableContent
            }
        self.init(status, error.code.rawValue, error.message)
    }

    func response(from request: Request, context: some RequestContext) throws -> Response { response }

    var response: Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=utf-8"
        if let retryAfter { headers[.retryAfter] = String(retryAfter) }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// `{"error": {"code", "message"}}`.
    var body: [UInt8] {
        var json = JSONWriter(capacity: 128)
        json.object { body in
            body.field("error", ErrorDetail(code: code, message: message))
        }
        return json.bytes
    }

    private struct ErrorDetail: JSONWritable {
        let code: String
        let message: String

        func write(to json: inout JSONWriter) {
            json.object {
                $0.field("code", code)
                $0.field("message", message)
            }
        }
    }
}

/// Turns every error a route throws into the JSON error of openapi.yaml, so that no request gets a 500 or a dropped
/// connection: what is not a client's fault is logged and answered `503 unavailable`.
struct ErrorMiddleware: RouterMiddleware {
    typealias Context = ChorusRequestContext

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            return Self.apiError(for: error, request: request, context: context).response
        }
    }

    static func apiError(for error: any Error, request: Request, context: Context) -> APIError {
        switch error {
        case let error as APIError:
            return error
        case let error as DomainError:
            return APIError(error)
        case is PasswordWorkBusy:
            return .unavailable(
                "too many sign-ups and logins are waiting for their password to be checked; retry shortly")
        case let error as WritesUnavailable:
            return .unavailable(error.description)
        case ProjectionError.notCaughtUp(let wanted, let applied):
            return APIError(
                .serviceUnavailable, "not_caught_up",
                "the read models have applied position \(applied), not yet \(wanted); retry shortly", retryAfter: 1)
        case ProjectionError.badCursor:
            return .badRequest("the cursor does not belong to this list")
        case let error as HTTPError where error.status == .notFound:
            return .notFound("no route \(request.method) \(request.uri.path)")
        case let error as HTTPError where error.status == .contentTooLarge:
            return .tooLarge("the body is too large")
        case let error as HTTPError where error.status.code < 500:
            return APIError(error.status, "bad_request", error.body ?? "the request is not valid")
        case is HTTPParserError:
            // The client's fault (a body cut short, a connection closed mid-request), not the server's: no error log.
            return .badRequest("the request is not valid HTTP, or ended before its body did")
        default:
            context.logger.error(
                "request failed",
                metadata: ["error": "\(error)", "method": "\(request.method)", "path": "\(request.uri.path)"])
            if let error = error as? EventLogError, error.code == .closed {
                return .unavailable("the server is shutting down")
            }
            return .unavailable("the server could not complete the request; it has been logged")
        }
    }
}
