import ChorusDomain
import ChorusLog
import ChorusStorage

/// Comments of each post in log order; pages walk it either way.
struct Comments: ReadModel {
    /// post, position → ``CommentRecord``
    static let comments: StoreTableDefinition = "comments"
    static let tables = [comments]
    static let tablesLoadedInKeyOrder = [comments]

    let comments: StoreTable

    init(store: KeyValueStore) {
        comments = store.table(Self.comments)
    }

    func apply(_ event: DomainEvent, at envelope: EventEnvelope, in transaction: StoreTransaction) throws {
        switch event {
        case .commentAdded(let event):
            var key = ProjectionKey(event.post)
            key.append(envelope.position)
            let record = CommentRecord(
                id: event.comment, author: event.author, text: event.text, createdAt: envelope.recordedAt,
                mentions: event.mentions)
            try transaction.put(record.encoded(), for: key.bytes, in: comments)
        case .commentDeleted(let event):
            var key = ProjectionKey(event.post)
            key.append(event.commentedAt)
            try transaction.delete(key.bytes, in: comments)
        case .postDeleted(let event):
            // Its comments go with it.
            var keys: [[UInt8]] = []
            try transaction.scan(comments, prefix: ProjectionKey(event.post).prefix()) { key, _ in
                keys.append(Array(key))
                return true
            }
            for key in keys { try transaction.delete(key, in: comments) }
        default:
            break
        }
    }
}

struct CommentRecord: Hashable {
    var id: CommentID
    var author: UserID
    var text: String
    var createdAt: EventTime
    var mentions: [UserID]

    func encoded() -> [UInt8] {
        var writer = PayloadWriter()
        writer.write(id)
        writer.write(author)
        writer.write(text)
        writer.write(createdAt.millisecondsSince1970)
        writer.write(mentions: mentions)
        return writer.bytes
    }

    init(id: CommentID, author: UserID, text: String, createdAt: EventTime, mentions: [UserID]) {
        self.id = id
        self.author = author
        self.text = text
        self.createdAt = createdAt
        self.mentions = mentions
    }

    init(decoding bytes: [UInt8]) throws {
        var reader = PayloadReader(bytes)
        id = try reader.read(CommentID.self)
        author = try reader.read(UserID.self)
        text = try reader.readString()
        createdAt = EventTime(millisecondsSince1970: try reader.readInt64())
        mentions = try reader.readMentions()
        try reader.finish()
    }
}

/// A comment as a screen shows it, with its author's profile as of the view.
public struct Comment: Sendable, Hashable {
    public let id: CommentID
    public let postID: PostID
    public let author: UserSummary
    public let text: String
    public let createdAt: EventTime
    /// Whom it mentions, as they are now, but those deleted or hidden from the viewer.
    public let mentions: [UserSummary]
}

extension ReadView {
    /// One comment of `post`, as it stands, whoever wrote it (a suspended author's too): for admins reviewing a report.
    /// Nil when it was deleted, or its post was.
    public func comment(_ comment: CommentID, on post: PostID) throws -> Comment? {
        var found: CommentRecord?
        try transaction.scan(models.comments.comments, prefix: ProjectionKey(post).prefix()) { _, value in
            let record = try CommentRecord(decoding: Array(value))
            if record.id == comment { found = record }
            return found == nil
        }
        return try found.map { try self.comment(from: $0, on: post, viewer: nil) }
    }

    /// The comment `record` holds, its mentions as `viewer` may see them.
    private func comment(from record: CommentRecord, on post: PostID, viewer: UserID?) throws -> Comment {
        Comment(
            id: record.id, postID: post, author: try requireSummary(record.author), text: record.text,
            createdAt: record.createdAt, mentions: try visibleSummaries(of: record.mentions, viewer: viewer))
    }
}

extension ReadView {
    /// Comments of a post as `viewer` sees them, oldest first unless asked otherwise; nil for a post they cannot read
    /// (unknown, deleted, or by someone who blocked them or whom they blocked), as the post itself answers.
    public func comments(
        on post: PostID, viewer: UserID? = nil, order: SortOrder = .oldestFirst, page: PageRequest
    ) throws -> Page<Comment>? {
        guard try withPost(post, viewer: viewer, { _ in }) != nil else { return nil }
        return try transaction.page(
            models.comments.comments, prefix: ProjectionKey(post).prefix(), order: order, request: page
        ) { _, value in
            let record = try CommentRecord(decoding: Array(value))
            // A suspended author's comments are hidden as if deleted, and so are those of users blocked either way.
            guard try !hides(record.author, from: viewer) else { return nil }
            return try comment(from: record, on: post, viewer: viewer)
        }
    }
}
