import ChorusDomain
import ChorusProjections
import Hummingbird

/// The Home and Following feeds, and notifications.
struct FeedRoutes {
    let endpoints: Endpoints

    func add(to group: RouterGroup<ChorusRequestContext>) {
        let renderer = endpoints.renderer
        endpoints.getPostPage(group, "feed/home") { view, caller, kind, page, each in
            try view.homeFeed(viewer: caller.user, kind: kind, page: page, each)
        }
        endpoints.getPostPage(group, "feed/following") { view, caller, kind, page, each in
            try view.followingFeed(of: caller.user, kind: kind, page: page, each)
        }
        endpoints.getPage(
            group, "notifications", { view, caller, page in try view.notifications(of: caller.user, page: page) },
            render: renderer.notification)
    }
}
