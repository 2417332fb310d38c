import ChorusLog

/// Mutes a word or phrase for the user, at most ``maximumWords`` at once.
struct MuteWord: Decision {
    let muted: WordMuted

    static let maximumWords = 100
    static let maximumLength = 100

    static func prepare(
        user: UserID, word: String, expiresAt: EventTime?, scope: MutedWordScope
    ) throws(DomainError) -> PreparedCommand {
        let word = try Validate.requiredText(word, field: "word", limit: maximumLength)
        guard !MutedWordMatcher.tokens(of: word).isEmpty else {
            throw DomainError(.invalidField, "word: a muted word needs a letter or a digit")
        }
        let muted = WordMuted(user: user, id: .make(), word: word, expiresAt: expiresAt, scope: scope)
        return PreparedCommand(
            caller: user.rawValue, tag: 45,
            fields: {
                $0.write(word)
                $0.write(expiresAt?.millisecondsSince1970 ?? 0)
                $0.write(scope.rawValue)
            }, decision: MuteWord(muted: muted))
    }

    func decide(in context: DecisionContext) throws -> CommandResult {
        try context.requireUser(muted.user)
        guard try context.state.mutedWords(of: muted.user, in: context.transaction).count < Self.maximumWords else {
            throw DomainError(.invalidField, "at most \(Self.maximumWords) muted words; unmute one first")
        }
        return try context.record(.wordMuted(muted), created: muted.id.rawValue)
    }
}

/// Takes a muted word back; one the user does not have is ``DomainError/Code/notFound``.
struct UnmuteWord: Decision {
    let user: UserID
    let id: MutedWordID

    static func prepare(user: UserID, id: MutedWordID) -> PreparedCommand {
        PreparedCommand(
            caller: user.rawValue, tag: 46, fields: { $0.write(id) }, decision: UnmuteWord(user: user, id: id))
    }

    func decide(in context: DecisionContext) throws -> CommandResult {
        try context.requireUser(user)
        guard let since = try context.state.mutedWord(id, of: user, in: context.transaction) else {
            throw DomainError(.notFound, "no muted word \(id)")
        }
        return try context.record(.wordUnmuted(WordUnmuted(user: user, id: id, mutedAt: since)))
    }
}
