import ChorusLog

/// What the decisions of the graph read in the state: follows, blocks and mutes.
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
}
