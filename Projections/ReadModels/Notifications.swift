import ChorusDomain
import ChorusLog
import ChorusStorage

/// What others did to one's things: likes, comments and plain reposts of one's posts, follows of oneself. Never one's
/// own acts. An unlike, unrepost or unfollow takes its notification back, so that liking and unliking cannot flood
/// anyone.
///
/// A like's or a follow's notification is keyed by the position of the like or follow, which an unlike or unfollow
/// records. Those recorded before they did (schema version 1) find it in ``Posts``' `post-likes` and ``Profiles``'
/// `follow-edges`: so this model is applied before those, to read it while it is still there.
struct Notifications: ReadModel {
    /// recipient, position → ``NotificationRecord``
    static let notifications: StoreTableDefinition = "notifications"
    static let tables = [notifications]
    static let tablesLoadedInKeyOrder = [notifications]

    let notifications: StoreTable
    let posts: StoreTable
    let likes: StoreTable
    let comments: StoreTable
    let edges: StoreTable

    init(store: KeyValueStore) {
        notifications = store.table(Self.notifications)
        posts = store.table(Posts.posts)
        likes = store.table(Posts.postLikes)
        comments = store.table(Comments.comments)
        edges = store.table(Profiles.edges)
    }

    func apply(_ event: DomainEvent, at envelope: EventEnvelope, in transaction: StoreTransaction) throws {
        switch event {
        case .liked(let event):
            guard let author = try author(of: event.post, recorded: event.postAuthor, in: transaction),
                author != event.user
            else { return }
            try add(
                NotificationRecord(
                    kind: .like, actor: event.user, post: event.post, comment: nil, createdAt: envelope.recordedAt),
                for: author, at: envelope.position, in: transaction)
        case .unliked(let event):
            var like = ProjectionKey(event.post)
            like.append(event.user)
            guard let since = try event.likedAt ?? transaction.position(under: like.bytes, in: likes),
                let author = try author(of: event.post, recorded: event.postAuthor, in: transaction)
            else { return }
            try remove(for: author, at: since, in: transaction)
        case .reposted(let event) where event.postAuthor != event.user:
            try add(
                NotificationRecord(
                    kind: .repost, actor: event.user, post: event.post, comment: nil, createdAt: envelope.recordedAt),
                for: event.postAuthor, at: envelope.position, in: transaction)
        case .unreposted(let event):
            try remove(for: event.postAuthor, at: event.repostedAt, in: transaction)
        case .followed(let event):
            try add(
                NotificationRecord(
                    kind: .follow, actor: event.follower, post: nil, comment: nil, createdAt: envelope.recordedAt),
                for: event.followee, at: envelope.position, in: transaction)
        case .unfollowed(let event):
            var edge = ProjectionKey(event.follower)
            edge.append(event.followee)
            guard let since = try event.followedAt ?? transaction.position(under: edge.bytes, in: edges) else { return }
            try remove(for: event.followee, at: since, in: transaction)
        case .commentAdded(let event):
            guard let author = try author(of: event.post, recorded: event.postAuthor, in: transaction),
                author != event.author
            else { return }
            let comment = NotificationRecord.CommentPart(id: event.comment, text: event.text)
            try add(
                NotificationRecord(
                    kind: .comment, actor: event.author, post: event.post, comment: comment,
                    createdAt: envelope.recordedAt),
                for: author, at: envelope.position, in: transaction)
        case .postDeleted(let event):
            // Every notification about the post went to its author, keyed by the position of its like or comment.
            let post = ProjectionKey(event.post).prefix()
            var positions: [LogPosition] = []
            try transaction.scan(likes, prefix: post) { _, value in
                positions.append(PositionValue.decode(value))
                return true
            }
            try transaction.scan(comments, prefix: post) { key, _ in
                positions.append(ProjectionKey.position(in: key, at: post.count))
                return true
            }
            for position in positions { try remove(for: event.author, at: position, in: transaction) }
        case .commentDeleted(let event):
            try remove(for: event.postAuthor, at: event.commentedAt, in: transaction)
        case .reposted, .userRegistered, .profileEdited, .postCreated, .postEdited, .messageSent, .roomCreated,
            .roomJoined, .roomLeft, .roomMessageSent, .notificationsRead, .conversationRead, .sessionStarted,
            .sessionEnded,
            .passwordChanged, .passwordResetRequested, .passwordResetUnmatched, .blocked, .unblocked, .muted, .unmuted,
            .reportFiled,
            .reportResolved, .userSuspended, .userUnsuspended, .accountDeleted, .erasureCompleted,
            .mediaRemoved, .deviceRegistered, .deviceForgotten, .pushSettingsChanged, .bookmarked, .unbookmarked:
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

    /// Takes back the notification of the like, comment or follow at `position`, if there was one (not for one's own
    /// post).
    private func remove(for recipient: UserID, at position: LogPosition, in transaction: StoreTransaction) throws {
        var key = ProjectionKey(recipient)
        key.append(position)
        try transaction.delete(key.bytes, in: notifications)
    }
}

/// What others did to one's things, as the notifications screen shows it.
public struct Notification: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        case like, follow, comment, repost
    }

    /// The post a like, comment or repost was on.
    public struct PostPart: Sendable, Hashable {
        public let id: PostID
        /// Its first image.
        public let image: MediaID?
    }

    /// Opaque and stable.
    public let id: String
    public let kind: Kind
    public let actor: UserSummary
    /// Whether the notified user follows the actor.
    public let actorIsFollowed: Bool
    public let post: PostPart?
    public let comment: Comment?
    public let createdAt: EventTime
}

extension ReadView {
    /// Likes, follows and comments by others on `user`'s things, newest first; `actorIsFollowed` is `user`'s view.
    public func notifications(of user: UserID, page: PageRequest) throws -> Page<Notification> {
        let prefix = ProjectionKey(user).prefix()
        return try transaction.page(
            models.notifications.notifications, prefix: prefix, order: .newestFirst, request: page
        ) { key, value in
            try notification(of: user, at: ProjectionKey.position(in: key, at: prefix.count), record: value)
        }
    }

    /// `user`'s notification made by the event at `position`, if it still stands: what the live stream sends.
    public func notification(of user: UserID, at position: LogPosition) throws -> Notification? {
        var key = ProjectionKey(user)
        key.append(position)
        return try transaction.withValue(for: key.bytes, in: models.notifications.notifications) { value in
            try value.flatMap { try notification(of: user, at: position, record: $0) }
        }
    }

    private func notification(of user: UserID, at position: LogPosition, record value: UnsafeRawBufferPointer) throws
        -> Notification?
    {
        let record = try NotificationRecord(decoding: Array(value))
        // What a blocked or muted user did notifies no one who hid them.
        guard try !hides(record.actor, from: user, muting: true) else { return nil }
        let actor = try requireSummary(record.actor)
        let post = try record.post.map { id in Notification.PostPart(id: id, image: try postRecord(id)?.media.first?.id)
        }
        var comment: Comment?
        if let post = record.post, let part = record.comment {
            comment = Comment(id: part.id, postID: post, author: actor, text: part.text, createdAt: record.createdAt)
        }
        let kind: Notification.Kind =
            switch record.kind {
            case .like: .like
            case .follow: .follow
            case .comment: .comment
            case .repost: .repost
            }
        return Notification(
            id: PageCursor(position: position).description, kind: kind, actor: actor,
            actorIsFollowed: try follows(user, record.actor), post: post, comment: comment, createdAt: record.createdAt)
    }
}

struct NotificationRecord: Hashable {
    enum Kind: UInt8 {
        case like = 1
        case follow = 2
        case comment = 3
        case repost = 4
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
