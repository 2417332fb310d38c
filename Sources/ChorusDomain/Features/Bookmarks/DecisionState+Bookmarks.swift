import ChorusLog

/// What the decisions of bookmarks read in the state (the table `bookmarks`).
extension DecisionState {
    /// Whether `user` saved `post`, and since which position.
    func bookmark(_ user: UserID, _ post: PostID, in state: some StateReader) throws -> Edge {
        try state.withValue(for: Self.key(user.rawValue, post.rawValue), in: bookmarks, Edge.init)
    }

    /// The ``Unbookmarked`` of every bookmark of `user`, in key order: what deleting their account takes back.
    func unbookmarks(of user: UserID, in state: some StateReader) throws -> [DomainEvent] {
        let prefix = Self.key(user.rawValue) + [0]
        var found: [DomainEvent] = []
        try state.forEach(in: bookmarks, prefix: prefix) { key, value in
            let post = PostID(unchecked: String(decoding: key[prefix.count...], as: UTF8.self))
            guard let since = Edge(value).since else { return true }
            found.append(.unbookmarked(Unbookmarked(user: user, post: post, bookmarkedAt: since)))
            return true
        }
        return found
    }
}
