import ChorusDomain
import ChorusLog
import ChorusStorage

/// Each user's muted words, which hide posts from what they read (``MutedWordMatcher``): their feeds, hashtag pages,
/// notifications and live streams, wherever muted users are hidden too.
struct MutedWords: ReadModel {
    /// user, position of its ``WordMuted`` → ``MutedWordRecord``
    static let mutedWords: StoreTableDefinition = "muted-words"
    static let tables = [mutedWords]
    static let tablesLoadedInKeyOrder = [mutedWords]

    let mutedWords: StoreTable

    init(store: KeyValueStore) {
        mutedWords = store.table(Self.mutedWords)
    }

    func apply(_ event: DomainEvent, at envelope: EventEnvelope, in transaction: StoreTransaction) throws {
        switch event {
        case .wordMuted(let event):
            let record = MutedWordRecord(
                id: event.id, word: event.word, expiresAt: event.expiresAt, scope: event.scope)
            try transaction.put(record.encoded(), for: Self.key(event.user, envelope.position), in: mutedWords)
        case .wordUnmuted(let event):
            try transaction.delete(Self.key(event.user, event.mutedAt), in: mutedWords)
        default:
            break
        }
    }

    static func key(_ user: UserID, _ position: LogPosition) -> [UInt8] {
        var key = ProjectionKey(user)
        key.append(position)
        return key.bytes
    }
}

/// A muted word as its user sees it.
public struct MutedWord: Sendable, Hashable {
    public let id: MutedWordID
    public let word: String
    public let expiresAt: EventTime?
    public let scope: MutedWordScope
}

extension MutedWord {
    init(_ record: MutedWordRecord) {
        (id, word, expiresAt, scope) = (record.id, record.word, record.expiresAt, record.scope)
    }
}

struct MutedWordRecord: Hashable {
    var id: MutedWordID
    var word: String
    var expiresAt: EventTime?
    var scope: MutedWordScope

    func encoded() -> [UInt8] {
        var writer = PayloadWriter()
        writer.write(id)
        writer.write(word)
        writer.write(expiresAt.map { $0.millisecondsSince1970 + 1 } ?? 0)
        writer.write(scope.rawValue)
        return writer.bytes
    }

    init(id: MutedWordID, word: String, expiresAt: EventTime?, scope: MutedWordScope) {
        (self.id, self.word, self.expiresAt, self.scope) = (id, word, expiresAt, scope)
    }

    init(decoding bytes: [UInt8]) throws {
        var reader = PayloadReader(bytes)
        id = try reader.read(MutedWordID.self)
        word = try reader.readString()
        let expires = try reader.readInt64()
        expiresAt = expires == 0 ? nil : EventTime(millisecondsSince1970: expires - 1)
        guard let scope = MutedWordScope(rawValue: try reader.readString()) else { throw PayloadError.badFlag(0) }
        self.scope = scope
        try reader.finish()
    }
}

/// The muted words of one viewer in force now, by scope: read once per view.
struct MutedWordFilter {
    let everyone: MutedWordMatcher
    let notFollowing: MutedWordMatcher

    var isEmpty: Bool { everyone.isEmpty && notFollowing.isEmpty }
}

final class MutedWordMemo {
    var byViewer: [UserID: MutedWordFilter] = [:]
    /// The first expiry of the muted words read: an answer that applied them holds until then at most.
    var firstExpiry: EventTime?
}

extension ReadView {
    /// `user`'s muted words, oldest first, those expired included.
    public func mutedWords(of user: UserID, page: PageRequest) throws -> Page<MutedWord> {
        try transaction.page(
            models.mutedWords.mutedWords, prefix: ProjectionKey(user).prefix(), order: .oldestFirst, request: page
        ) { _, value in MutedWord(try MutedWordRecord(decoding: Array(value))) }
    }

    /// `user`'s muted word `id`; nil when they have none such.
    public func mutedWord(_ id: MutedWordID, of user: UserID) throws -> MutedWord? {
        try allMutedWords(of: user).first { $0.id == id }
    }

    private func allMutedWords(of user: UserID) throws -> [MutedWord] {
        var found: [MutedWord] = []
        try transaction.scan(models.mutedWords.mutedWords, prefix: ProjectionKey(user).prefix()) { _, value in
            found.append(MutedWord(try MutedWordRecord(decoding: Array(value))))
            return true
        }
        return found
    }

    /// When an answer read from this view stops holding though the read models do not change: the first expiry of a
    /// muted word it applied; nil when none.
    var answerExpiresAt: EventTime? { mutedWordMemo.firstExpiry }

    /// Whether `viewer`'s muted words in force hide what `author` wrote in `texts`: never their own.
    func mutedWordsHide(
        _ texts: @autoclosure () -> [String], by author: @autoclosure () -> UserID, from viewer: UserID?
    ) throws -> Bool {
        guard let viewer else { return false }
        let filter = try mutedWordFilter(of: viewer)
        guard !filter.isEmpty else { return false }
        let author = author()
        guard author != viewer else { return false }
        let texts = texts()
        if filter.everyone.matches(texts) { return true }
        return try !filter.notFollowing.isEmpty && filter.notFollowing.matches(texts) && !follows(viewer, author)
    }

    /// Whether `viewer` has muted words in force.
    func mutesWords(_ viewer: UserID) throws -> Bool { try !mutedWordFilter(of: viewer).isEmpty }

    private func mutedWordFilter(of viewer: UserID) throws -> MutedWordFilter {
        if let known = mutedWordMemo.byViewer[viewer] { return known }
        let now = EventTime.now
        let inForce = try allMutedWords(of: viewer).filter { word in word.expiresAt.map { $0 > now } ?? true }
        for expiry in inForce.compactMap(\.expiresAt) where mutedWordMemo.firstExpiry.map({ expiry < $0 }) ?? true {
            mutedWordMemo.firstExpiry = expiry
        }
        let filter = MutedWordFilter(
            everyone: MutedWordMatcher(inForce.filter { $0.scope == .everyone }.map(\.word)),
            notFollowing: MutedWordMatcher(inForce.filter { $0.scope == .notFollowing }.map(\.word)))
        mutedWordMemo.byViewer[viewer] = filter
        return filter
    }
}
