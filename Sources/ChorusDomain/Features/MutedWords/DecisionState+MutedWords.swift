import ChorusLog

/// What the decisions of muted words read in the state (the table `muted-words`).
extension DecisionState {
    /// The position `user` muted the word `id` at; nil when they have no such muted word.
    func mutedWord(_ id: MutedWordID, of user: UserID, in state: some StateReader) throws -> LogPosition? {
        try state.withValue(for: Self.key(user.rawValue, id.rawValue), in: mutedWords) { Edge($0).since }
    }

    /// Every muted word of `user`, with the position it was muted at.
    func mutedWords(of user: UserID, in state: some StateReader) throws -> [(id: MutedWordID, since: LogPosition)] {
        let prefix = Self.key(user.rawValue) + [0]
        var found: [(id: MutedWordID, since: LogPosition)] = []
        try state.forEach(in: mutedWords, prefix: prefix) { key, value in
            if let since = Edge(value).since {
                found.append((MutedWordID(unchecked: String(decoding: key[prefix.count...], as: UTF8.self)), since))
            }
            return true
        }
        return found
    }

    /// The ``WordUnmuted`` of every muted word of `user`: what deleting their account takes back.
    func unmutes(of user: UserID, in state: some StateReader) throws -> [DomainEvent] {
        try mutedWords(of: user, in: state).map { .wordUnmuted(WordUnmuted(user: user, id: $0.id, mutedAt: $0.since)) }
    }
}
