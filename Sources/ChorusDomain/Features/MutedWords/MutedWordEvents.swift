import ChorusLog

/// Whose posts a muted word hides: everyone's, or only those of users the muter does not follow.
public enum MutedWordScope: String, Sendable, Hashable, CaseIterable {
    case everyone
    case notFollowing = "not_following"

    /// As events store it.
    var code: UInt8 { UInt8(Self.allCases.firstIndex(of: self)!) }

    init(code: UInt8) throws {
        guard Int(code) < Self.allCases.count else { throw PayloadError.badFlag(code) }
        self = Self.allCases[Int(code)]
    }
}

/// `user` muted a word or phrase: posts holding it are left out of what they read (``MutedWordMatcher``) until
/// `expiresAt`, if set. The word is the user's personal text, sealed under their key.
public struct WordMuted: Sendable, Hashable {
    public var user: UserID
    public var id: MutedWordID
    public var word: String
    public var expiresAt: EventTime?
    public var scope: MutedWordScope
    public init(user: UserID, id: MutedWordID, word: String, expiresAt: EventTime?, scope: MutedWordScope) {
        self.user = user
        self.id = id
        self.word = word
        self.expiresAt = expiresAt
        self.scope = scope
    }
}

/// `user` took a muted word back, or their account was deleted. `mutedAt` is the position of its ``WordMuted``, so
/// that whoever follows the log finds it without looking it up.
public struct WordUnmuted: Sendable, Hashable {
    public var user: UserID
    public var id: MutedWordID
    public var mutedAt: LogPosition
    public init(user: UserID, id: MutedWordID, mutedAt: LogPosition) {
        self.user = user
        self.id = id
        self.mutedAt = mutedAt
    }
}

/// The id, the expiry (ms since 1970 plus one, 0 for none) and the scope in plain; the word sealed.
extension WordMuted: StoredEvent {
    static let typeName = "WordMuted"
    static let schemaVersion: UInt16 = 1
    var stream: StreamID { .user(user) }
    var domainEvent: DomainEvent { .wordMuted(self) }

    func encode(to payload: inout PayloadWriter, keys: any PersonalDataKeys) throws {
        payload.write(user)
        payload.write(id)
        payload.write(expiresAt.map { $0.millisecondsSince1970 + 1 } ?? 0)
        payload.write(scope.code)
        try payload.writeSealed(by: user, in: Self.typeName, keys: keys) { $0.write(word) }
    }

    init(from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys) throws {
        let user = try payload.read(UserID.self)
        let id = try payload.read(MutedWordID.self)
        let expires = try payload.readInt64()
        let scope = try MutedWordScope(code: try payload.readByte())
        var fields = try payload.openSealed(by: user, in: Self.typeName, keys: keys)
        self.init(
            user: user, id: id, word: try fields?.readString() ?? "",
            expiresAt: expires == 0 ? nil : EventTime(millisecondsSince1970: expires - 1), scope: scope)
        try fields?.finish()
    }

    func changeState(_ state: DecisionState, at position: LogPosition, in changes: inout DecisionState.ChangeList) {
        changes.put(state.mutedWords, .init(user.rawValue, id.rawValue), since: position)
    }
}

extension WordUnmuted: StoredEvent {
    static let typeName = "WordUnmuted"
    static let schemaVersion: UInt16 = 1
    var stream: StreamID { .user(user) }
    var domainEvent: DomainEvent { .wordUnmuted(self) }

    func encode(to payload: inout PayloadWriter, keys: any PersonalDataKeys) throws {
        payload.write(user)
        payload.write(id)
        payload.write(mutedAt.rawValue)
    }

    init(from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys) throws {
        self.init(
            user: try payload.read(UserID.self), id: try payload.read(MutedWordID.self),
            mutedAt: LogPosition(try payload.readUInt64()))
    }

    func changeState(_ state: DecisionState, at position: LogPosition, in changes: inout DecisionState.ChangeList) {
        changes.remove(state.mutedWords, .init(user.rawValue, id.rawValue))
    }
}
