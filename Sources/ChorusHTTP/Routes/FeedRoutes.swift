import ChorusDomain
import ChorusProjections
import Hummingbird

/// The Home and Following feeds, and notifications.
struct FeedRoutes {
    let endpoints: Endpoints

    struct ReadUpTo: Decodable {
        let upTo: String
    }

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
        group.post("notifications/read") { request, context in
            let caller = try context.requireCaller()
            let (body, bytes) = try await JSONBody.decode(ReadUpTo.self, from: request)
            // A notification's id is the cursor of its position.
            guard let upTo = PageCursor(body.upTo)?.position else {
                throw APIError(DomainError(.invalidField, "upTo: not a notification id"))
            }
            let command = Command.readNotifications(user: caller.user, upTo: upTo)
            return try await endpoints.write(request, context: context, requestBody: bytes, command: command) {
                view, _ in UnreadJSON(name: "unreadNotifications", count: try view.unreadNotifications(of: caller.user))
            }
        }
    }
}
