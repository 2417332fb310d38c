import ChorusDomain
import ChorusLog

/// What others did to one's things: likes and comments on one's posts, follows of oneself. Never one's own acts. An
/// unlike or unfollow takes its notification back, so that liking and unliking cannot flood anyone.
///
/// - `notifications`: recipient, position → ``NotificationRecord``
///
/// A like's or a follow's notification is keyed by the position of the like or follow, which an unlike or unfollow
/// records. Those recorded before they did (schema version 1) find it in ``Posts``' `post-likes` and ``Profiles``'
/// `follow-edges`: so this model is applied before those, to read it while it is still there.
struct Notifications: ReadModel {
    static let tables = [Tables.notifications]

    let notifications: StoreTable
    let posts: StoreTable
    let likes: StoreTable
    let edges: StoreTable

    init(store: KeyValueStore) {
        notifications = store.table(Tables.notifications)
        posts = store.table(Tables.posts)
        likes = store.table(Tables.postLikes)
        edges = store.table(Tables.followEdges)
    }

    func apply(_ event: DomainEvent, at envelope: EventEnvelope, in transaction: StoreTransaction) throws {
        switch event {
        case .liked(let event):
            guard let author = try author(of: event.post, recorded: event.postAuthor, in: transaction), author != event.user
            else { return }
            try add(
                NotificationRecord(kind: .like, actor: event.user, post: event.post, comment: nil, createdAt: envelope.recordedAt),
                for: author, at: envelope.position, in: transaction)
        case .unliked(let event):
            var like = ProjectionKey(event.post)
            like.append(event.user)
            guard let since = try event.likedAt ?? transaction.position(under: like.bytes, in: likes),
                let author = try author(of: event.post, recorded: event.postAuthor, in: transaction)
            else { return }
            try remove(for: author, at: since, in: transaction)
        case .followed(let event):
            try add(
                NotificationRecord(kind: .follow, actor: event.follower, post: nil, comment: nil, createdAt: envelope.recordedAt),
                for: event.followee, at: envelope.position, in: transaction)
        case .unfollowed(let event):
            var edge = ProjectionKey(event.follower)
            edge.append(event.followee)
            guard let since = try event.followedAt ?? transaction.position(under: edge.bytes, in: edges) else { return }
            try remove(for: event.followee, at: since, in: transaction)
        case .commentAdded(let event):
            guard let author = try author(of: event.post, recorded: event.postAuthor, in: transaction), author != event.author
            else { return }
            let comment = NotificationRecord.CommentPart(id: event.comment, text: event.text)
            try add(
                NotificationRecord(kind: .comment, actor: event.author, post: event.post, comment: comment, createdAt: envelope.recordedAt),
                for: author, at: envelope.position, in: transaction)
        case .userRegistered, .profileEdited, .postCreated, .messageSent, .sessionStarted, .sessionEnded:
            break
        }
    }

    /// The post's author as the event recorded it, or, for events recorded before they carried it, as the post
    /// record has it (a third of a build's random reads, when every event needed it).
    private func author(of post: PostID, recorded: UserID?, in transaction: StoreTransaction) throws -> UserID? {
        if let recorded { return recorded }
        return try transaction.value(for: ProjectionKey(post).bytes, in: posts).map(PostRecord.author(decoding:))
    }

    private func add(
        _ record: NotificationRecord, for recipient: UserID, at position: LogPosition, in transaction: StoreTransaction
    ) throws {
        var key = ProjectionKey(recipient)
        key.append(position)
        try transaction.put(record.encoded(), for: key.bytes, in: notifications)
    }

    /// Takes back the notification of the like or follow at `position`, if there was one (not for one's own post).
    private func remove(for recipient: UserID, at position: LogPosition, in transaction: StoreTransaction) throws {
        var key = ProjectionKey(recipient)
        key.append(position)
        try transaction.delete(key.bytes, in: notifications)
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
