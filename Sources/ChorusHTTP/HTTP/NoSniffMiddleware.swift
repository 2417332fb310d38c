import Hummingbird

/// Tells browsers to take every answer as the type it says (`X-Content-Type-Options: nosniff`): an uploaded file that
/// claims to be an image but holds HTML or script is then never run as a page of this server's origin.
struct NoSniffMiddleware: RouterMiddleware {
    typealias Context = ChorusRequestContext

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var response = try await next(request, context)
        response.headers[.contentTypeOptions] = "nosniff"
        return response
    }
}
