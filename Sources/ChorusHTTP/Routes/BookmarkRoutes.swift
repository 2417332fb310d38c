import ChorusDomain
import ChorusProjections
import Hummingbird

/// Bookmarks: posts saved for later, which the caller alone sees.
struct BookmarkRoutes {
    let endpoints: Endpoints

    func add(to group: RouterGroup<ChorusRequestContext>) {
        group.put("posts/:id/bookmark") { request, context in try await bookmark(request, context, saved: true) }
        group.delete("posts/:id/bookmark") { request, context in try await bookmark(request, context, saved: false) }
        endpoints.getPostPage(group, "me/bookmarks") { view, caller, kind, page, each in
            try view.bookmarkedPosts(of: caller.user, kind: kind, page: page, each)
        }
    }

    private func bookmark(_ request: Request, _ context: ChorusRequestContext, saved: Bool) async throws -> Response {
        let caller = try context.requireCaller()
        let post = try Endpoints.pathID(context, "id", as: PostID.self)
        let command: Command =
            saved ? .bookmark(user: caller.user, post: post) : .unbookmark(user: caller.user, post: post)
        return try await PostRoutes.inPath(post) {
            // Decided: the post is saved now, or not, whether this changed it or a repeat found it so.
            try await endpoints.write(request, context: context, command: command) { _, _ in
                BookmarkJSON(bookmarked: saved)
            }
        }
    }
}

/// The answer of `PUT` and `DELETE /v1/posts/{id}/bookmark`.
struct BookmarkJSON: JSONWritable {
    let bookmarked: Bool

    func write(to json: inout JSONWriter) {
        json.object { $0.field("bookmarked", bookmarked) }
    }
}
