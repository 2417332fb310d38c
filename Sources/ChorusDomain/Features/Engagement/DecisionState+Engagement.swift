import ChorusLog

/// What the decisions of likes, reposts and comments read in the state.
extension DecisionState {
    /// Whether `user` reposted `post` plainly (``Reposted``), and since which position.
    func share(_ user: UserID, _ post: PostID, in state: some StateReader) throws -> Edge {
        try state.withValue(for: Self.key(post.rawValue, user.rawValue), in: shares, Edge.init)
    }

    /// The ``Unreposted`` of every plain repost of `post` (by `author`) that stands, in key order.
    func unreposts(of post: PostID, by author: UserID, in state: some StateReader) throws -> [DomainEvent] {
        let prefix = Self.key(post.rawValue) + [0]
        var found: [DomainEvent] = []
        try state.forEach(in: shares, prefix: prefix) { key, value in
            let user = UserID(unchecked: String(decoding: key[prefix.count...], as: UTF8.self))
            guard let since = Edge(value).since else { return true }
            found.append(.unreposted(Unreposted(user: user, post: post, postAuthor: author, repostedAt: since)))
            return true
        }
        return found
    }

    /// The comment as the state keeps it, deleted or not; nil if there never was one.
    func comment(_ comment: CommentID, in state: some StateReader) throws -> CommentState? {
        try state.withValue(for: Self.key(comment.rawValue), in: comments) { try $0.map(CommentState.init(decoding:)) }
    }

    /// Whether `user` likes `post`, and since which position (nil if recorded without it).
    func like(_ user: UserID, _ post: PostID, in state: some StateReader) throws -> Edge {
        try state.withValue(for: Self.key(user.rawValue, post.rawValue), in: likes, Edge.init)
    }
}
