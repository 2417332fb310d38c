import ChorusDomain
import ChorusLog

/// Direct messages per pair of users, and each user's recent-messages list: one row per partner, latest first.
///
/// - `messages`: the pair (smaller id, larger id), position → ``MessageRecord``
/// - `recent`: user, position of the latest message with a partner → partner
/// - `recent-index`: user, partner → that position (to move the row when a newer message comes)
struct Conversations: ReadModel {
    static let tables = [Tables.messages, Tables.recent, Tables.recentIndex]

    let messages: StoreTable
    let recent: StoreTable
    let recentIndex: StoreTable

    init(store: KeyValueStore) {
        messages = store.table(Tables.messages)
        recent = store.table(Tables.recent)
        recentIndex = store.table(Tables.recentIndex)
    }

    func apply(_ event: DomainEvent, at envelope: EventEnvelope, in transaction: StoreTransaction) throws {
        guard case .messageSent(let event) = event else { return }
        var key = Self.pairPrefix(event.from, event.to)
        key.append(envelope.position)
        let record = MessageRecord(id: event.message, from: event.from, to: event.to, text: event.text, createdAt: envelope.recordedAt)
        try transaction.put(record.encoded(), for: key.bytes, in: messages)
        try moveToTop(of: event.from, partner: event.to, at: envelope.position, in: transaction)
        try moveToTop(of: event.to, partner: event.from, at: envelope.position, in: transaction)
    }

    /// Both users' conversation shares one key prefix: the two ids in order.
    static func pairPrefix(_ one: UserID, _ other: UserID) -> ProjectionKey {
        var key = ProjectionKey(min(one, other))
        key.append(max(one, other))
        return key
    }

    private func moveToTop(of user: UserID, partner: UserID, at position: LogPosition, in transaction: StoreTransaction)
        throws
    {
        var index = ProjectionKey(user)
        index.append(partner)
        if let previous = try transaction.withValue(for: index.bytes, in: recentIndex, { $0.map(PositionValue.decode) }) {
            var old = ProjectionKey(user)
            old.append(previous)
            try transaction.delete(old.bytes, in: recent)
        }
        var row = ProjectionKey(user)
        row.append(position)
        try transaction.put(Array(partner.rawValue.utf8), for: row.bytes, in: recent)
        try transaction.put(PositionValue.encode(position), for: index.bytes, in: recentIndex)
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
