import Hummingbird

/// Refuses every request that could write, before it reaches a route: for a server of a past state
/// (`chorus serve --read-only`). Reads, live streams and media downloads go on.
struct ReadOnlyMiddleware: RouterMiddleware {
    typealias Context = ChorusRequestContext

    static let refusal = "this server is read-only (a past state of the log); it accepts no writes"

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard request.method == .get || request.method == .head else {
            throw APIError.forbidden(Self.refusal)
        }
        return try await next(request, context)
    }
}
