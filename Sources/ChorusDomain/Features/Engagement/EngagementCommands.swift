import ChorusLog

struct LikePost: Decision {
    let user: UserID
    let post: PostID

    static func prepare(user: UserID, post: PostID) -> PreparedCommand {
        PreparedCommand(
            caller: user.rawValue, tag: 4, fields: { $0.write(post) }, decision: LikePost(user: user, post: post))
    }

    func decide(in context: DecisionContext) throws -> CommandResult {
        try context.requireUser(user)
        let author = try context.requireStandingPost(post).author
        try context.refuseUnlessReadable(by: user, postsOf: author)
        guard try !context.state.like(user, post, in: context.transaction).exists else { return context.unchanged }
        return try context.record(.liked(Liked(user: user, post: post, postAuthor: author)))
    }
}

struct UnlikePost: Decision {
    let user: UserID
    let post: PostID

    static func prepare(user: UserID, post: PostID) -> PreparedCommand {
        PreparedCommand(
            caller: user.rawValue, tag: 5, fields: { $0.write(post) }, decision: UnlikePost(user: user, post: post))
    }

    func decide(in context: DecisionContext) throws -> CommandResult {
        try context.requireUser(user)
        let author = try context.requireStandingPost(post).author
        let like = try context.state.like(user, post, in: context.transaction)
        guard like.exists else { return context.unchanged }
        return try context.record(.unliked(Unliked(user: user, post: post, postAuthor: author, likedAt: like.since)))
    }
}

/// Reposts a post plainly: naming a plain repost reposts its original. The answer names the post reposted.
struct RepostPost: Decision {
    let user: UserID
    let post: PostID

    static func prepare(user: UserID, post: PostID) -> PreparedCommand {
        PreparedCommand(
            caller: user.rawValue, tag: 27, fields: { $0.write(post) }, decision: RepostPost(user: user, post: post))
    }

    func decide(in context: DecisionContext) throws -> CommandResult {
        try context.requireUser(user)
        let original = try context.state.repostTarget(of: post, in: context.transaction)
        try context.refuseUnlessReadable(by: user, postsOf: original.author)
        guard try !context.state.share(user, original.post, in: context.transaction).exists else {
            return context.unchanged(created: original.post.rawValue)
        }
        return try context.record(
            .reposted(Reposted(user: user, post: original.post, postAuthor: original.author)),
            created: original.post.rawValue)
    }
}

struct UnrepostPost: Decision {
    let user: UserID
    let post: PostID

    static func prepare(user: UserID, post: PostID) -> PreparedCommand {
        PreparedCommand(
            caller: user.rawValue, tag: 28, fields: { $0.write(post) }, decision: UnrepostPost(user: user, post: post))
    }

    func decide(in context: DecisionContext) throws -> CommandResult {
        try context.requireUser(user)
        let original = try context.state.repostTarget(of: post, in: context.transaction)
        guard let since = try context.state.share(user, original.post, in: context.transaction).since else {
            return context.unchanged(created: original.post.rawValue)
        }
        let unreposted = Unreposted(user: user, post: original.post, postAuthor: original.author, repostedAt: since)
        return try context.record(.unreposted(unreposted), created: original.post.rawValue)
    }
}

struct AddComment: Decision {
    let comment: CommentAdded

    static func prepare(author: UserID, post: PostID, text: String) throws(DomainError) -> PreparedCommand {
        let text = try Validate.requiredText(text, field: "comment", limit: FieldLimits.comment)
        let comment = CommentAdded(comment: .make(), post: post, author: author, text: text)
        return PreparedCommand(
            caller: author.rawValue, tag: 6,
            fields: {
                $0.write(post)
                $0.write(text)
            }, decision: AddComment(comment: comment))
    }

    func decide(in context: DecisionContext) throws -> CommandResult {
        var comment = self.comment
        try context.requireUser(comment.author)
        let postAuthor = try context.requireStandingPost(comment.post).author
        comment.postAuthor = postAuthor
        try context.refuseUnlessReadable(by: comment.author, postsOf: postAuthor)
        try Self.requireAllowed(comment.author, on: comment.post, by: postAuthor, in: context)
        comment.mentions = try context.state.mentioned(in: comment.text, by: comment.author, in: context.transaction)
        return try context.record(.commentAdded(comment), created: comment.comment.rawValue)
    }

    /// Throws ``DomainError/Code/repliesRestricted`` unless the post's ``ReplyPolicy`` lets `commenter` comment. Its
    /// author always may.
    static func requireAllowed(
        _ commenter: UserID, on post: PostID, by author: UserID, in context: DecisionContext
    ) throws {
        guard commenter != author else { return }
        let allowed =
            switch try context.state.replyPolicy(of: post, in: context.transaction) {
            case .everyone: true
            case .following: try context.state.follow(author, commenter, in: context.transaction).exists
            case .mentioned: try context.state.mentions(post, commenter, in: context.transaction)
            case .nobody: false
            }
        guard allowed else {
            throw DomainError(.repliesRestricted, "the author of post \(post) does not let you comment on it")
        }
    }
}

/// Deletes a comment: its author may, and so may the post's author. Deleting it again changes nothing.
struct DeleteComment: Decision {
    let user: UserID
    let post: PostID
    let comment: CommentID

    static func prepare(user: UserID, post: PostID, comment: CommentID) -> PreparedCommand {
        PreparedCommand(
            caller: user.rawValue, tag: 14,
            fields: {
                $0.write(post)
                $0.write(comment)
            }, decision: DeleteComment(user: user, post: post, comment: comment))
    }

    func decide(in context: DecisionContext) throws -> CommandResult {
        try context.requireUser(user)
        let postAuthor = try context.requireStandingPost(post).author
        guard let found = try context.state.comment(comment, in: context.transaction), found.post == post else {
            throw DomainError(.notFound, "no comment \(comment) on post \(post)")
        }
        guard user == found.author || user == postAuthor else {
            throw DomainError(.forbidden, "only its author or the post's author can delete comment \(comment)")
        }
        guard !found.deleted else { return context.unchanged }
        let deleted = CommentDeleted(
            comment: comment, post: post, author: found.author, postAuthor: postAuthor, commentedAt: found.commentedAt)
        return try context.record(.commentDeleted(deleted))
    }
}
