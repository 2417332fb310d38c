import Hummingbird
import Logging

/// Logs each request once it is answered, at `debug` (`chorus serve --log-level debug`): method, path (the query is
/// left out: it can hold what users searched for), status and milliseconds, with Hummingbird's request id. Outside
/// the error middleware, so a failure is logged with the status it was answered with. A live stream is logged when
/// its headers go out, not when it ends.
struct AccessLogMiddleware: RouterMiddleware {
    typealias Context = ChorusRequestContext

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let started = ContinuousClock.now
        let response = try await next(request, context)
        let milliseconds = (ContinuousClock.now - started).seconds * 1_000
        context.logger.debug(
            "request",
            metadata: [
                "method": .string(request.method.rawValue), "path": .string(request.uri.path),
                "status": .stringConvertible(response.status.code), "ms": .string(String(format: "%.2f", milliseconds)),
            ])
        return response
    }
}
