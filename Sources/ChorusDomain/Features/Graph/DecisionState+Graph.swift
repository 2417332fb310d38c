import ChorusLog

/// What the decisions of the graph read in the state: follows, follow requests, private accounts, blocks and mutes.
extension DecisionState {
    /// Whether `follower` follows `followee`, and since which position (nil if recorded without it).
    func follow(_ follower: UserID, _ followee: UserID, in state: some StateReader) throws -> Edge {
        try state.withValue(for: Self.key(follower.rawValue, followee.rawValue), in: follows, Edge.init)
    }

    /// Whether `user` blocked `other`, and since which position.
    func block(_ user: UserID, _ other: UserID, in state: some StateReader) throws -> Edge {
        try state.withValue(for: Self.key(user.rawValue, other.rawValue), in: blocks, Edge.init)
    }

    /// Whether either of the two users blocked the other.
    func eitherBlocked(_ one: UserID, _ other: UserID, in state: some StateReader) throws -> Bool {
        try block(one, other, in: state).exists || block(other, one, in: state).exists
    }

    /// Whether `user` muted `other`, and since which position.
    func mute(_ user: UserID, _ other: UserID, in state: some StateReader) throws -> Edge {
        try state.withValue(for: Self.key(user.rawValue, other.rawValue), in: mutes, Edge.init)
    }

    /// Whether `user`'s account is private: only the followers it accepts see its posts.
    func isPrivate(_ user: UserID, in state: some StateReader) throws -> Bool {
        try state.withValue(for: Self.key(user.rawValue), in: privateAccounts) { $0 != nil }
    }

    /// Whether `follower` asked to follow `followee` and awaits an answer, and since which position.
    func followRequest(_ follower: UserID, to followee: UserID, in state: some StateReader) throws -> Edge {
        try state.withValue(for: Self.key(followee.rawValue, follower.rawValue), in: followRequests, Edge.init)
    }

    /// The pending requests to follow `followee`: who asked, and at which position, in id order.
    func followRequests(to followee: UserID, in state: some StateReader) throws -> [(UserID, LogPosition)] {
        let prefix = Self.key(followee.rawValue) + [0]
        var found: [(UserID, LogPosition)] = []
        try state.forEach(in: followRequests, prefix: prefix) { key, value in
            guard let since = Edge(value).since else { return true }
            found.append((UserID(unchecked: String(decoding: key[prefix.count...], as: UTF8.self)), since))
            return true
        }
        return found
    }

    /// The ``FollowRequestEnded`` events that withdraw every pending request between `user` and `other`, either way.
    func withdrawnRequests(between user: UserID, and other: UserID, in state: some StateReader) throws -> [DomainEvent]
    {
        try [(user, other), (other, user)].compactMap { follower, followee in
            try followRequest(follower, to: followee, in: state).since.map {
                .followRequestEnded(
                    FollowRequestEnded(follower: follower, followee: followee, requestedAt: $0, reason: .withdrawn))
            }
        }
    }
}
