import ChorusDomain
import ChorusLog

/// Direct messages per pair of users (each user's list of them: ``RecentMessages``).
///
/// - `messages`: the pair (smaller id, larger id), position → ``MessageRecord``
struct Conversations: ReadModel {
    static let tables = [Tables.messages]

    let messages: StoreTable

    init(store: KeyValueStore) {
        messages = store.table(Tables.messages)
    }

    func apply(_ event: DomainEvent, at envelope: EventEnvelope, in transaction: StoreTransaction) throws {
        guard case .messageSent(let event) = event else { return }
        var key = Self.pairPrefix(event.from, event.to)
        key.append(envelope.position)
        let record = MessageRecord(id: event.message, from: event.from, to: event.to, text: event.text, createdAt: envelope.recordedAt)
        try transaction.put(record.encoded(), for: key.bytes, in: messages)
    }

    /// Both users' conversation shares one key prefix: the two ids in order.
    static func pairPrefix(_ one: UserID, _ other: UserID) -> ProjectionKey {
        var key = ProjectionKey(min(one, other))
        key.append(max(one, other))
        return key
    }
}

struct MessageRecord: Hashable {
    var id: MessageID
    var from: UserID
    var to: UserID
    var text: String
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

    init(id: MessageID, from: UserID, to: UserID, text: String, createdAt: EventTime) {
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
        text = try reader.readString()
        createdAt = EventTime(millisecondsSince1970: try reader.readInt64())
        try reader.finish()
    }
}
