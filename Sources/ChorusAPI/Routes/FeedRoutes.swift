import ChorusDomain
import ChorusProjections
import Hummingbird

/// The Home and Following feeds, and notifications.
struct FeedRoutes {
    let endpoints: Endpoints

    func add(to group: RouterGroup<ChorusRequestContext>) {
        let renderer = endpoints.renderer
        endpoints.getPage(group, "feed/home", { view, caller, page in try view.storedHomeFeed(viewer: caller.user, page: page) },
            render: renderer.post)
        endpoints.getPage(group, "feed/following", { view, caller, page in try view.storedFollowingFeed(of: caller.user, page: page) },
            render: renderer.post)
        endpoints.getPage(group, "notifications", { view, caller, page in try view.notifications(of: caller.user, page: page) },
            render: renderer.notification)
    }
}
