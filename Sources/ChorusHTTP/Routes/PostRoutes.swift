import ChorusDomain
import ChorusLog
import ChorusProjections
import Hummingbird

/// Posts, likes, reposts and comments.
struct PostRoutes {
    let endpoints: Endpoints

    struct NewPost: Decodable {
        let caption: String?
        let text: String?
        /// One image without alt text, as version 1 clients post it.
        let image: String?
        let media: [PostImageBody]?
        let repostOf: String?
        let replies: String?
    }

    /// Absent fields stay as they are.
    struct PostEdit: Decodable {
        let caption: String?
        let text: String?
        /// The post's images, the same in the same order, with their new alt texts.
        let media: [PostImageBody]?
        let replies: String?
    }

    /// Who may comment, as a body names it.
    static func replies(_ text: String?) throws -> ReplyPolicy? {
        try text.map { try Endpoints.choice($0, field: "replies") }
    }

    struct PostImageBody: Decodable {
        let id: String
        let alt: String?

        /// A malformed id names nothing, like an unknown one.
        func image() throws -> PostImage {
            guard let media = MediaID(id) else { throw APIError(DomainError(.unknownMedia, "no media \(id)")) }
            return PostImage(id: media, alt: alt)
        }
    }

    struct NewComment: Decodable {
        let text: String
    }

    func add(to group: RouterGroup<ChorusRequestContext>) {
        let renderer = endpoints.renderer
        group.post("posts") { request, context in try await createPost(request, context) }
        group.get("posts/:id") { request, context in
            let caller = try context.requireCaller()
            let post = try Endpoints.pathID(context, "id", as: PostID.self)
            return try await endpoints.read(request) { view, json in
                try view.requireReadable(post, by: caller.user)
                try UserRoutes.require(
                    view.withPost(post, viewer: caller.user) { renderer.write($0, to: &json) }, "post")
            }
        }
        group.patch("posts/:id") { request, context in
            let caller = try context.requireCaller()
            let post = try Endpoints.pathID(context, "id", as: PostID.self)
            let (body, bytes) = try await JSONBody.decode(PostEdit.self, from: request)
            let command = Command.editPost(
                author: caller.user, post: post, caption: body.caption, text: body.text,
                media: try body.media.map { try $0.map { try $0.image() } }, replies: try Self.replies(body.replies))
            return try await Self.inPath(post) {
                try await endpoints.write(request, context: context, requestBody: bytes, command: command) {
                    view, _, json in
                    try Self.stillThere(view.withPost(post, viewer: caller.user) { renderer.write($0, to: &json) })
                }
            }
        }
        group.delete("posts/:id") { request, context in
            let caller = try context.requireCaller()
            let post = try Endpoints.pathID(context, "id", as: PostID.self)
            return try await Self.inPath(post) {
                try await endpoints.writeAnsweringNothing(
                    request, context: context, command: .deletePost(author: caller.user, post: post))
            }
        }
        group.put("posts/:id/like") { request, context in try await like(request, context, liked: true) }
        group.delete("posts/:id/like") { request, context in try await like(request, context, liked: false) }
        group.put("posts/:id/repost") { request, context in try await repost(request, context, reposted: true) }
        group.delete("posts/:id/repost") { request, context in try await repost(request, context, reposted: false) }
        group.get("posts/:id/comments") { request, context in
            let caller = try context.requireCaller()
            let post = try Endpoints.pathID(context, "id", as: PostID.self)
            let page = try Endpoints.page(request)
            let order = try Endpoints.order(request, default: .oldestFirst)
            return try await endpoints.read(request) { view in
                try view.requireReadable(post, by: caller.user)
                return renderer.page(
                    try UserRoutes.require(
                        view.comments(on: post, viewer: caller.user, order: order, page: page), "post"),
                    renderer.comment)
            }
        }
        group.post("posts/:id/comments") { request, context in try await addComment(request, context) }
        group.delete("posts/:id/comments/:commentId") { request, context in try await deleteComment(request, context) }
    }

    private func createPost(_ request: Request, _ context: ChorusRequestContext) async throws -> Response {
        let renderer = endpoints.renderer
        let caller = try context.requireCaller()
        let (body, bytes) = try await JSONBody.decode(NewPost.self, from: request)
        if body.image != nil, body.media != nil {
            throw APIError(DomainError(.invalidField, "a post gives its images as media or as image, not both"))
        }
        let media =
            try body.media?.map { try $0.image() } ?? body.image.map { [try PostImageBody(id: $0, alt: nil).image()] }
            ?? []
        let repostOf = try body.repostOf.map { text in
            guard let id = PostID(text) else { throw APIError(DomainError(.unknownPost, "no post \(text)")) }
            return id
        }
        let command = Command.createPost(
            author: caller.user, caption: body.caption, text: body.text, media: media, repostOf: repostOf,
            replies: try Self.replies(body.replies) ?? .everyone)
        return try await endpoints.write(
            request, context: context, requestBody: bytes, status: .created, command: command
        ) { view, result, json in
            let post = PostID(unchecked: result.createdID ?? "")
            try UserRoutes.require(
                view.withPost(post, viewer: caller.user) { renderer.write($0, to: &json) }, "post")
        }
    }

    private func addComment(_ request: Request, _ context: ChorusRequestContext) async throws -> Response {
        let renderer = endpoints.renderer
        let caller = try context.requireCaller()
        let post = try Endpoints.pathID(context, "id", as: PostID.self)
        let (body, bytes) = try await JSONBody.decode(NewComment.self, from: request)
        let command = Command.addComment(author: caller.user, post: post, text: body.text)
        return try await Self.inPath(post) {
            try await endpoints.write(
                request, context: context, requestBody: bytes, status: .created, command: command
            ) { view, result in
                let recorded = try endpoints.event(at: result.position)
                guard case .commentAdded(let comment) = recorded.event else {
                    throw APIError.unavailable("no comment at position \(result.position)")
                }
                return CommentJSON(
                    id: comment.comment.rawValue, postId: post.rawValue,
                    author: renderer.user(try UserRoutes.require(view.userSummary(caller.user), "user")),
                    text: comment.text, createdAt: recorded.time,
                    mentions: try view.visibleSummaries(of: comment.mentions, viewer: caller.user).map(renderer.user))
            }
        }
    }

    private func deleteComment(_ request: Request, _ context: ChorusRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let post = try Endpoints.pathID(context, "id", as: PostID.self)
        let comment = try Endpoints.pathID(context, "commentId", as: CommentID.self)
        return try await Self.inPath(post) {
            try await endpoints.writeAnsweringNothing(
                request, context: context, command: .deleteComment(user: caller.user, post: post, comment: comment))
        }
    }

    private func like(_ request: Request, _ context: ChorusRequestContext, liked: Bool) async throws -> Response {
        let caller = try context.requireCaller()
        let post = try Endpoints.pathID(context, "id", as: PostID.self)
        let command: Command = liked ? .like(user: caller.user, post: post) : .unlike(user: caller.user, post: post)
        return try await Self.inPath(post) {
            try await endpoints.write(request, context: context, command: command) { view, _ in
                let found = try Self.stillThere(view.post(post, viewer: caller.user))
                return LikeJSON(liked: found.hasLiked, likes: found.likes)
            }
        }
    }

    private func repost(_ request: Request, _ context: ChorusRequestContext, reposted: Bool) async throws -> Response {
        let caller = try context.requireCaller()
        let post = try Endpoints.pathID(context, "id", as: PostID.self)
        let command: Command =
            reposted ? .repost(user: caller.user, post: post) : .unrepost(user: caller.user, post: post)
        return try await Self.inPath(post) {
            try await endpoints.write(request, context: context, command: command) { view, result in
                // The post reposted: the original, when the path named a plain repost of it.
                let original = result.createdID.flatMap(PostID.init) ?? post
                let found = try Self.stillThere(view.post(original, viewer: caller.user))
                return RepostJSON(reposted: found.hasReposted, reposts: found.reposts)
            }
        }
    }

    /// The post a write on it answers with. The write was decided on a standing post, so a post not there any more
    /// was deleted since (the answer reads a snapshot at the write's position or later): 410, as the next write on it
    /// would be.
    private static func stillThere<T>(_ found: T?) throws -> T {
        guard let found else { throw APIError(DomainError(.gone, "the post was deleted")) }
        return found
    }

    /// Runs a write on the post its path names: a post that is not there is that path's 404, not a 422 of the body.
    static func inPath(_ post: PostID, _ write: () async throws -> Response) async throws -> Response {
        do {
            return try await write()
        } catch let error as DomainError where error.code == .unknownPost {
            throw APIError.notFound("no post \(post)")
        }
    }
}
