import ChorusDomain
import ChorusLog
import ChorusStorage

/// Direct messages per pair of users (each user's list of them: ``RecentMessages``).
struct Conversations: ReadModel {
    /// the pair (smaller id, larger id), position → ``MessageRecord``
    static let messages: StoreTableDefinition = "messages"
    static let tables = [messages]
    static let tablesLoadedInKeyOrder = [messages]

    let messages: StoreTable

    init(store: KeyValueStore) {
        messages = store.table(Self.messages)
    }

    func apply(_ event: DomainEvent, at envelope: EventEnvelope, in transaction: StoreTransaction) throws {
        if case .accountDeleted(let event) = event { return try eraseMessages(of: event.user, in: transaction) }
        guard case .messageSent(let event) = event else { return }
        var key = Self.pairPrefix(event.from, event.to)
        key.append(envelope.position)
        let record = MessageRecord(
            id: event.message, from: event.from, to: event.to, text: event.text, createdAt: envelope.recordedAt)
        try transaction.put(record.encoded(), for: key.bytes, in: messages)
    }

    /// Takes the text out of every message `user` sent: their partners keep the conversation, with the message and
    /// its time, but nothing of what it said.
    private func eraseMessages(of user: UserID, in transaction: StoreTransaction) throws {
        try transaction.eraseText(of: user, in: messages, as: MessageRecord.self)
    }

    /// Both users' conversation shares one key prefix: the two ids in order.
    static func pairPrefix(_ one: UserID, _ other: UserID) -> ProjectionKey {
        var key = ProjectionKey(min(one, other))
        key.append(max(one, other))
        return key
    }
}

/// A stored message, direct or to a room, whose text goes when its sender's account does.
protocol SentMessageRecord {
    var from: UserID { get }
    var text: String? { get set }
    init(decoding bytes: [UInt8]) throws
    func encoded() -> [UInt8]
}

extension StoreTransaction {
    /// Sets the text of every message of `table` that `user` sent to nil. Reads the whole table: an account is deleted
    /// rarely.
    func eraseText<Record: SentMessageRecord>(of user: UserID, in table: StoreTable, as: Record.Type) throws {
        var erased: [([UInt8], Record)] = []
        try scan(table) { key, value in
            var record = try Record(decoding: Array(value))
            if record.from == user, record.text != nil {
                record.text = nil
                erased.append((Array(key), record))
            }
            return true
        }
        for (key, record) in erased { try put(record.encoded(), for: key, in: table) }
    }
}

struct MessageRecord: SentMessageRecord, Hashable {
    var id: MessageID
    var from: UserID
    var to: UserID
    /// Nil once its sender's account was deleted.
    var text: String?
    var createdAt: EventTime

    func encoded() -> [UInt8] {
        var writer = PayloadWriter()
        writer.write(id)
        writer.write(from)
        writer.write(to)
        writer.write(text)
        writer.write(createdAt.millisecondsSince1970)
        return writer.bytes
    }

    init(id: MessageID, from: UserID, to: UserID, text: String?, createdAt: EventTime) {
        self.id = id
        self.from = from
        self.to = to
        self.text = text
        self.createdAt = createdAt
    }

    init(decoding bytes: [UInt8]) throws {
        var reader = PayloadReader(bytes)
        id = try reader.read(MessageID.self)
        from = try reader.read(UserID.self)
        to = try reader.read(UserID.self)
        text = try reader.readOptionalString()
        createdAt = EventTime(millisecondsSince1970: try reader.readInt64())
        try reader.finish()
    }
}

/// A direct message, with both users' profiles as of the view.
public struct Message: Sendable, Hashable {
    public let id: MessageID
    public let from: UserSummary
    public let to: UserSummary
    /// Nil once its sender's account was deleted.
    public let text: String?
    public let createdAt: EventTime
}

extension ReadView {
    /// The messages between `user` and `partner`, newest first unless asked otherwise.
    public func messages(between user: UserID, and partner: UserID, order: SortOrder = .newestFirst, page: PageRequest)
        throws -> Page<Message>
    {
        try transaction.page(
            models.conversations.messages, prefix: Conversations.pairPrefix(user, partner).prefix(), order: order,
            request: page
        ) { _, value in try message(MessageRecord(decoding: Array(value))) }
    }

    /// Whether `recipient` knows `sender`: follows them, or wrote to them first among the 200 oldest messages between
    /// the two (a conversation's opening; past it, a stranger's flood would cost each check a scan). A message from
    /// someone the recipient does not know is held to a limit of its own.
    public func knows(_ recipient: UserID, _ sender: UserID) throws -> Bool {
        if try follows(recipient, sender) { return true }
        var (wrote, scanned) = (false, 0)
        try transaction.scan(
            models.conversations.messages, prefix: Conversations.pairPrefix(recipient, sender).prefix()
        ) { _, value in
            wrote = try MessageRecord(decoding: Array(value)).from == recipient
            scanned += 1
            return !wrote && scanned < 200
        }
        return wrote
    }

    /// The message between `user` and `partner` at `position`.
    func message(between user: UserID, and partner: UserID, at position: LogPosition) throws -> Message? {
        var key = Conversations.pairPrefix(user, partner)
        key.append(position)
        return try transaction.value(for: key.bytes, in: models.conversations.messages).map {
            try message(MessageRecord(decoding: $0))
        }
    }

    private func message(_ record: MessageRecord) throws -> Message {
        Message(
            id: record.id, from: try requireSummary(record.from), to: try requireSummary(record.to), text: record.text,
            createdAt: record.createdAt)
    }
}
