import ChorusDomain
import ChorusLog

/// What others did to one's things: likes and comments on one's posts, follows of oneself. Never one's own acts. An
/// unlike or unfollow takes its notification back, so that liking and unliking cannot flood anyone.
///
/// - `notifications`: recipient, position → ``NotificationRecord``
/// - `notification-refs`: kind, actor, target → recipient and position (to take a notification back)
struct Notifications: ReadModel {
    static let tables = [Tables.notifications, Tables.notificationReferences]

    let notifications: StoreTable
    let references: StoreTable
    let posts: StoreTable

    init(store: KeyValueStore) {
        notifications = store.table(Tables.notifications)
        references = store.table(Tables.notificationReferences)
        posts = store.table(Tables.posts)
    }

    func apply(_ event: DomainEvent, at envelope: EventEnvelope, in transaction: StoreTransaction) throws {
        switch event {
        case .liked(let event):
            guard let author = try author(of: event.post, in: transaction), author != event.user else { return }
            try add(
                NotificationRecord(kind: .like, actor: event.user, post: event.post, comment: nil, createdAt: envelope.recordedAt),
                for: author, at: envelope.position, reference: reference(.like, event.user, event.post.rawValue),
                in: transaction)
        case .unliked(let event):
            try remove(reference(.like, event.user, event.post.rawValue), in: transaction)
        case .followed(let event):
            try add(
                NotificationRecord(kind: .follow, actor: event.follower, post: nil, comment: nil, createdAt: envelope.recordedAt),
                for: event.followee, at: envelope.position,
                reference: reference(.follow, event.follower, event.followee.rawValue), in: transaction)
        case .unfollowed(let event):
            try remove(reference(.follow, event.follower, event.followee.rawValue), in: transaction)
        case .commentAdded(let event):
            guard let author = try author(of: event.post, in: transaction), author != event.author else { return }
            let comment = NotificationRecord.CommentPart(id: event.comment, text: event.text)
            try add(
                NotificationRecord(kind: .comment, actor: event.author, post: event.post, comment: comment, createdAt: envelope.recordedAt),
                for: author, at: envelope.position, reference: nil, in: transaction)
        case .userRegistered, .profileEdited, .postCreated, .messageSent, .sessionStarted, .sessionEnded:
            break
        }
    }

    private func author(of post: PostID, in transaction: StoreTransaction) throws -> UserID? {
        try transaction.value(for: ProjectionKey(post).bytes, in: posts).map(PostRecord.author(decoding:))
    }

    private func reference(_ kind: NotificationRecord.Kind, _ actor: UserID, _ target: String) -> [UInt8] {
        Array("\(kind.rawValue)\u{0}\(actor)\u{0}\(target)".utf8)
    }

    private func add(
        _ record: NotificationRecord, for recipient: UserID, at position: LogPosition, reference: [UInt8]?,
        in transaction: StoreTransaction
    ) throws {
        var key = ProjectionKey(recipient)
        key.append(position)
        try transaction.put(record.encoded(), for: key.bytes, in: notifications)
        if let reference { try transaction.put(key.bytes, for: reference, in: references) }
    }

    private func remove(_ reference: [UInt8], in transaction: StoreTransaction) throws {
        guard let key = try transaction.value(for: reference, in: references) else { return }
        try transaction.delete(key, in: notifications)
        try transaction.delete(reference, in: references)
    }
}

struct NotificationRecord: Hashable {
    enum Kind: UInt8 {
        case like = 1
        case follow = 2
        case comment = 3
    }

    struct CommentPart: Hashable {
        var id: CommentID
        var text: String
    }

    var kind: Kind
    var actor: UserID
    var post: PostID?
    var comment: CommentPart?
    var createdAt: EventTime

    func encoded() -> [UInt8] {
        var writer = PayloadWriter()
        writer.write(kind.rawValue)
        writer.write(actor)
        writer.write(post)
        writer.write(comment?.id)
        writer.write(comment?.text)
        writer.write(createdAt.millisecondsSince1970)
        return writer.bytes
    }

    init(kind: Kind, actor: UserID, post: PostID?, comment: CommentPart?, createdAt: EventTime) {
        self.kind = kind
        self.actor = actor
        self.post = post
        self.comment = comment
        self.createdAt = createdAt
    }

    init(decoding bytes: [UInt8]) throws {
        var reader = PayloadReader(bytes)
        guard let kind = Kind(rawValue: try reader.readByte()) else { throw PayloadError.badFlag(0) }
        self.kind = kind
        actor = try reader.read(UserID.self)
        post = try reader.readOptional(PostID.self)
        let commentID = try reader.readOptional(CommentID.self)
        let commentText = try reader.readOptionalString()
        comment = commentID.map { CommentPart(id: $0, text: commentText ?? "") }
        createdAt = EventTime(millisecondsSince1970: try reader.readInt64())
        try reader.finish()
    }
}
