import Hummingbird

/// Holds each signed-in user to ``RateLimits/writesPerUser``: every request that is not a read (`GET`, `HEAD`) spends
/// one of the caller's attempts, before anything is decoded or decided. The kinds of writes that reach other people,
/// or that pile up for the admins, have tighter limits of their own in their routes.
struct WriteLimitMiddleware: RouterMiddleware {
    typealias Context = ChorusRequestContext

    let writesPerUser: RateLimiter?

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        if let writesPerUser, request.method != .get, request.method != .head, let caller = context.caller {
            try Limiters.spend(writesPerUser, caller.user.rawValue, "writes by this account")
        }
        return try await next(request, context)
    }
}
