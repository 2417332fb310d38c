import ChorusLog

/// What the decisions of posts read in the state: posts, their authors, their plain reposts.
extension DecisionState {
    /// The post as the state keeps it, deleted or not; nil if there never was one.
    func post(_ post: PostID, in state: some StateReader) throws -> PostState? {
        try state.withValue(for: Self.key(post.rawValue), in: posts) { try $0.map(PostState.init(decoding:)) }
    }

    /// Who may comment on `post` besides its author.
    func replyPolicy(of post: PostID, in state: some StateReader) throws -> ReplyPolicy {
        try state.withValue(for: Self.key(post.rawValue), in: replyRules) { value in
            guard let value, value.count == 1 else { return .everyone }
            return try ReplyPolicy(code: value[0])
        }
    }

    /// The author of `post`, nil if there is no such post or it was deleted.
    func author(of post: PostID, in state: some StateReader) throws -> UserID? {
        guard let found = try self.post(post, in: state), !found.deleted else { return nil }
        return found.author
    }

    /// The plain reposts of `post` that stand, in key order.
    func plainReposts(of post: PostID, in state: some StateReader) throws -> [PostID] {
        let prefix = Self.key(post.rawValue) + [0]
        var found: [PostID] = []
        try state.forEach(in: reposts, prefix: prefix) { key, _ in
            found.append(PostID(unchecked: String(decoding: key[prefix.count...], as: UTF8.self)))
            return true
        }
        return found
    }

    /// The post a repost of `post` reposts: `post` itself, or the original of a plain repost (``isPlainRepost(_:)``),
    /// which shows nothing of its own. Throws if `post` never was, or was deleted.
    func repostTarget(of post: PostID, in state: some StateReader) throws -> (post: PostID, author: UserID) {
        guard let found = try self.post(post, in: state) else { throw DomainError(.unknownPost, "no post \(post)") }
        guard !found.deleted else { throw DomainError(.gone, "post \(post) was deleted") }
        guard let original = found.repostOf,
            try state.withValue(for: Self.key(original.rawValue, post.rawValue), in: reposts, { $0 != nil })
        else { return (post, found.author) }
        // A plain repost goes with its original: while it stands, so does the original.
        guard let author = try author(of: original, in: state) else {
            throw DomainError(.gone, "post \(original) was deleted")
        }
        return (original, author)
    }

    /// What deleting `post` (which stands, as `found`) appends: the ``Unreposted`` of its plain reposts by toggle
    /// (so that they leave the feeds while the post is still there to find), its PostDeleted, then one for each plain
    /// repost post of it, which shows nothing of its own and goes with it.
    func deletions(of post: PostID, _ found: PostState, in state: some StateReader) throws -> [DomainEvent] {
        var deletions = try unreposts(of: post, by: found.author, in: state)
        deletions.append(
            .postDeleted(
                PostDeleted(post: post, author: found.author, postedAt: found.postedAt, repostOf: found.repostOf)))
        for repost in try plainReposts(of: post, in: state) {
            guard let plain = try self.post(repost, in: state), !plain.deleted else { continue }
            deletions.append(
                .postDeleted(PostDeleted(post: repost, author: plain.author, postedAt: plain.postedAt, repostOf: post)))
        }
        return deletions
    }

    /// A repost with nothing of its own: it shows as its original, and goes with it.
    static func isPlainRepost(_ event: PostCreated) -> Bool {
        event.repostOf != nil && event.text.isEmpty && event.caption.isEmpty && event.media.isEmpty
    }
}
