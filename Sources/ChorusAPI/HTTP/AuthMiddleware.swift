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
        guard let (user, session) = try backend.user(forToken: token) else {
            throw APIError.unauthorized("the token is not valid, has expired, or was revoked")
        }
        var context = context
        context.caller = Caller(user: user, session: session)
        return try await next(request, context)
    }

    static func bearerToken(_ request: Request) -> String? {
        guard let value = request.headers[.authorization] else { return nil }
        let parts = value.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return parts[1].trimmingCharacters(in: .whitespaces)
    }
}
