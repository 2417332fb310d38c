import ChorusDomain
import ChorusProjections
import Hummingbird

/// The requests to follow the caller's private account: listed, accepted, declined. (Asking and withdrawing are
/// `PUT|DELETE /v1/users/{id}/follow`, in ``UserRoutes``.)
struct FollowRequestRoutes {
    let endpoints: Endpoints

    func add(to group: RouterGroup<ChorusRequestContext>) {
        endpoints.getPage(
            group, "me/follow-requests", { view, caller, page in try view.followRequests(of: caller.user, page: page) },
            render: endpoints.renderer.user)
        group.post("me/follow-requests/:userId/accept") { request, context in
            try await answer(request, context, accept: true)
        }
        group.post("me/follow-requests/:userId/decline") { request, context in
            try await answer(request, context, accept: false)
        }
    }

    /// Accepts or declines a pending request to follow the caller; answers nothing.
    private func answer(_ request: Request, _ context: ChorusRequestContext, accept: Bool) async throws -> Response {
        let caller = try context.requireCaller()
        let follower = try Endpoints.pathID(context, "userId", as: UserID.self)
        let command: Command =
            accept
            ? .acceptFollowRequest(followee: caller.user, follower: follower)
            : .declineFollowRequest(followee: caller.user, follower: follower)
        return try await endpoints.writeAnsweringNothing(request, context: context, command: command)
    }
}
