import ChorusLog

/// Saves a post for later (repeats change nothing). A post of someone blocked either way cannot be saved.
struct BookmarkPost: Decision {
    let user: UserID
    let post: PostID

    static func prepare(user: UserID, post: PostID) -> PreparedCommand {
        PreparedCommand(
            caller: user.rawValue, tag: 43, fields: { $0.write(post) }, decision: BookmarkPost(user: user, post: post))
    }

    func decide(in context: DecisionContext) throws -> CommandResult {
        try context.requireUser(user)
        let author = try context.requireStandingPost(post).author
        try context.refuseUnlessReadable(by: user, postsOf: author)
        guard try !context.state.bookmark(user, post, in: context.transaction).exists else {
            return context.unchanged
        }
        return try context.record(.bookmarked(Bookmarked(user: user, post: post)))
    }
}

/// Takes a bookmark back (repeats change nothing), also of a post deleted since, so that it can be cleared away.
struct UnbookmarkPost: Decision {
    let user: UserID
    let post: PostID

    static func prepare(user: UserID, post: PostID) -> PreparedCommand {
        PreparedCommand(
            caller: user.rawValue, tag: 44, fields: { $0.write(post) },
            decision: UnbookmarkPost(user: user, post: post))
    }

    func decide(in context: DecisionContext) throws -> CommandResult {
        try context.requireUser(user)
        guard let since = try context.state.bookmark(user, post, in: context.transaction).since else {
            _ = try context.requireStandingPost(post)
            return context.unchanged
        }
        return try context.record(.unbookmarked(Unbookmarked(user: user, post: post, bookmarkedAt: since)))
    }
}
