import ChorusBackend
import Hummingbird

/// Lets a request through only with `Authorization: Bearer <token>` of a live session, and tells the routes who
/// calls. Everything else is `401 unauthorized`, with nothing said about why a token failed.
struct AuthMiddleware: RouterMiddleware {
    typealias Context = ChorusRequestContext

    let backend: ChorusBackend

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard let token = Self.bearerToken(request) else {
            throw APIError.unauthorized("send Authorization: Bearer <token>")
        }
        guard let (user, session) = try await backend.user(forToken: token) else {
            throw APIError.unauthorized("the token is not valid, has expired, or was revoked")
        }
        var context = context
        context.caller = Caller(user: user, session: session)
        return try await next(request, context)
    }

    /// The token of `Authorization: Bearer <token>`: the scheme in any case, blanks around either part ignored. Read
    /// byte by byte; splitting, lowercasing and trimming it with Foundation made strings on every request.
    /// The field is found by walking the fields: `headers[.authorization]` joins every field of the name into a new
    /// string. Two Authorization fields count as none, as their joined value did.
    static func bearerToken(_ request: Request) -> String? {
        var found: String?
        for field in request.headers where field.name == .authorization {
            guard found == nil else { return nil }
            found = field.value
        }
        guard let value = found else { return nil }
        let utf8 = value.utf8
        func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard let schemeStart = utf8.firstIndex(where: { !isBlank($0) }),
            let schemeEnd = utf8[schemeStart...].firstIndex(where: isBlank),
            // ASCII letters fold to lower case with 0x20.
            utf8[schemeStart..<schemeEnd].elementsEqual("bearer".utf8, by: { $0 | 0x20 == $1 }),
            let tokenStart = utf8[schemeEnd...].firstIndex(where: { !isBlank($0) }),
            let tokenLast = utf8.lastIndex(where: { !isBlank($0) })
        else { return nil }
        return String(value[tokenStart...tokenLast])
    }
}
