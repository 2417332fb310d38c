import ChorusBackend
import Hummingbird

/// Counts every request and times it, by route pattern, method and status; the outermost middleware, so it sees
/// the status errors were turned into.
struct MetricsMiddleware: RouterMiddleware {
    typealias Context = ChorusRequestContext

    let metrics: ChorusMetrics

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let started = ContinuousClock.now
        let response = try await next(request, context)
        metrics.recordRequest(
            route: context.endpointPath ?? "unmatched", method: request.method.rawValue, status: response.status.code,
            duration: ContinuousClock.now - started)
        return response
    }
}
