import ChorusBackend
import Crypto
import Hummingbird

/// Opens the admin routes to `Authorization: Bearer <CHORUS_ADMIN_TOKEN>` and nothing else: without a configured
/// token they stay shut, a user's token is `403 forbidden`, anything else `401 unauthorized`. Tokens are compared in
/// constant time.
struct AdminMiddleware: RouterMiddleware {
    typealias Context = ChorusRequestContext

    let adminToken: String?
    let backend: ChorusBackend

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard let presented = AuthMiddleware.bearerToken(request) else {
            throw APIError.unauthorized("admin routes need the admin token")
        }
        if Self.presentsAdminToken(request, adminToken: adminToken) { return try await next(request, context) }
        if try await backend.user(forToken: presented) != nil {
            throw APIError.forbidden("admin routes need the admin token, not a user's")
        }
        throw APIError.unauthorized("admin routes need the admin token")
    }

    /// Whether `request` carries the configured admin token (never, when none is configured).
    static func presentsAdminToken(_ request: Request, adminToken: String?) -> Bool {
        guard let adminToken, let presented = AuthMiddleware.bearerToken(request) else { return false }
        return constantTimeEqual(presented, adminToken)
    }

    /// Compares digests, so that the time taken says nothing about where two tokens differ, nor how long they are.
    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let left = Array(SHA256.hash(data: Array(a.utf8)))
        let right = Array(SHA256.hash(data: Array(b.utf8)))
        return zip(left, right).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
