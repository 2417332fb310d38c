import ChorusDomain
import ChorusLog

/// Comments of each post in log order; pages walk it either way.
///
/// - `comments`: post, position → ``CommentRecord``
struct Comments: ReadModel {
    static let tables = [Tables.comments]

    let comments: StoreTable

    init(store: KeyValueStore) {
        comments = store.table(Tables.comments)
    }

    func apply(_ event: DomainEvent, at envelope: EventEnvelope, in transaction: StoreTransaction) throws {
        guard case .commentAdded(let event) = event else { return }
        var key = ProjectionKey(event.post)
        key.append(envelope.position)
        let record = CommentRecord(id: event.comment, author: event.author, text: event.text, createdAt: envelope.recordedAt)
        try transaction.put(record.encoded(), for: key.bytes, in: comments)
    }
}

struct CommentRecord: Hashable {
    var id: CommentID
    var author: UserID
    var text: String
    var createdAt: EventTime

    func encoded() -> [UInt8] {
        var writer = PayloadWriter()
        writer.write(id)
        writer.write(author)
        writer.write(text)
        writer.write(createdAt.millisecondsSince1970)
        return writer.bytes
    }

    init(id: CommentID, author: UserID, text: String, createdAt: EventTime) {
        self.id = id
        self.author = author
        self.text = text
        self.createdAt = createdAt
    }

    init(decoding bytes: [UInt8]) throws {
        var reader = PayloadReader(bytes)
        id = try reader.read(CommentID.self)
        author = try reader.read(UserID.self)
        text = try reader.readString()
        createdAt = EventTime(millisecondsSince1970: try reader.readInt64())
        try reader.finish()
    }
}
