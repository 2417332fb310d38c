import ChorusLog

/// What the decisions of messages, rooms and reads read in the state.
extension DecisionState {
    func roomExists(_ room: RoomID, in state: some StateReader) throws -> Bool {
        try state.withValue(for: Self.key(room.rawValue), in: rooms) { $0 != nil }
    }

    /// Whether `user` is a member of `room`, and since which position.
    func membership(of user: UserID, in room: RoomID, state: some StateReader) throws -> Edge {
        try state.withValue(for: Self.key(room.rawValue, user.rawValue), in: roomMembers, Edge.init)
    }

    /// The position `user`'s notifications are read up to.
    func notificationsRead(by user: UserID, in state: some StateReader) throws -> LogPosition? {
        try state.withValue(for: Self.key(user.rawValue), in: notificationReads, Edge.init).since
    }

    /// Whether `reader` has read their conversation with `partner` since its last message.
    func hasReadConversation(_ reader: UserID, with partner: UserID, in state: some StateReader) throws -> Bool {
        let read = try state.withValue(
            for: Self.key(reader.rawValue, partner.rawValue), in: conversationReads, Edge.init
        ).since
        let head = try state.withValue(for: Self.pairKey(reader, partner), in: conversationHeads, Edge.init).since
        guard let head else { return true }
        return read.map { $0 > head } ?? false
    }

    /// The key of a conversation: its two users, the smaller id first.
    static func pairKey(_ one: UserID, _ other: UserID) -> [UInt8] {
        let (first, second) = pair(one, other)
        return key(first.rawValue, second.rawValue)
    }

    /// The two users of a conversation in the order its key holds them.
    static func pair(_ one: UserID, _ other: UserID) -> (UserID, UserID) { (min(one, other), max(one, other)) }
}
