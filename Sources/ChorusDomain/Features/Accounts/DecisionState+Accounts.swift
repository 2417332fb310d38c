import ChorusLog

/// What the decisions of accounts read in the state: users, e-mails, passwords, sessions and resets.
extension DecisionState {
    func exists(_ user: UserID, in state: some StateReader) throws -> Bool {
        try state.withValue(for: Self.key(user.rawValue), in: users) { $0 != nil }
    }

    /// The user registered with the e-mail of `emailKey`, unless they deleted their account.
    func user(withEmailKey emailKey: String, in state: some StateReader) throws -> UserID? {
        guard
            let user = try state.value(for: Self.key(emailKey), in: emails).map({
                UserID(unchecked: String(decoding: $0, as: UTF8.self))
            }), try exists(user, in: state)
        else { return nil }
        return user
    }

    func passwordHash(of user: UserID, in state: some StateReader) throws -> String? {
        try state.value(for: Self.key(user.rawValue), in: users).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The session's user and expiry, unless it ended.
    func session(_ session: SessionID, in state: some StateReader) throws -> (user: UserID, expiresAt: EventTime)? {
        try state.withValue(for: Self.key(session.rawValue), in: sessions) { stored in
            guard let stored, stored.count > 9, let separator = stored.firstIndex(of: 0), stored.count - separator == 9
            else { return nil }
            let user = UserID(unchecked: String(decoding: stored[..<separator], as: UTF8.self))
            let milliseconds = Int64(bigEndian: stored.loadUnaligned(fromByteOffset: separator + 1, as: Int64.self))
            return (user, EventTime(millisecondsSince1970: milliseconds))
        }
    }

    /// The ids under `user` in a table keyed by user, id (`user-sessions`, `resets`), in key order.
    func ids(of user: UserID, in table: StateTable, state: some StateReader) throws -> [String] {
        let prefix = Self.key(user.rawValue) + [0]
        var found: [String] = []
        try state.forEach(in: table, prefix: prefix) { key, _ in
            found.append(String(decoding: key[prefix.count...], as: UTF8.self))
            return true
        }
        return found
    }

    /// The sessions of `user` that have not ended (some may have expired).
    func sessions(of user: UserID, in state: some StateReader) throws -> [SessionID] {
        try ids(of: user, in: userSessions, state: state).map(SessionID.init(unchecked:))
    }

    /// The resets of `user` that no password change has revoked (some may have expired).
    func resets(of user: UserID, in state: some StateReader) throws -> [ResetID] {
        try ids(of: user, in: resets, state: state).map(ResetID.init(unchecked:))
    }

    /// When `user`'s `reset` expires; nil if there is no such reset, or a password change revoked it.
    func reset(_ reset: ResetID, of user: UserID, in state: some StateReader) throws -> EventTime? {
        try state.withValue(for: Self.key(user.rawValue, reset.rawValue), in: resets) { value in
            guard let value, value.count == 8 else { return nil }
            return EventTime(millisecondsSince1970: Int64(bigEndian: value.loadUnaligned(as: Int64.self)))
        }
    }
}
