import ChorusDomain
import ChorusLog
import ChorusStorage

/// What others did to one's things: likes, comments and plain reposts of one's posts, follows of oneself and requests
/// to, acceptances of one's requests, mentions of oneself in posts and comments. Never one's own acts. A request
/// answered or withdrawn takes its notification back. An unlike, unrepost or unfollow takes its notification back, so that liking and unliking cannot flood
/// anyone.
///
/// A like's or a follow's notification is keyed by the position of the like or follow, which an unlike or unfollow
/// records. Those recorded before they did (schema version 1) find it in ``Posts``' `post-likes` and ``Profiles``'
/// `follow-edges`: so this model is applied before those, to read it while it is still there.
struct Notifications: ReadModel {
    /// recipient, position → ``NotificationRecord``
    static let notifications: StoreTableDefinition = "notifications"
    /// post, position, recipient → 0 for a mention in the post, 1 in a comment on it at that position: the mention
    /// notifications an edit or a deletion takes back
    static let mentionNotifications: StoreTableDefinition = "mention-notifications"
    static let tables = [notifications, mentionNotifications]
    static let tablesLoadedInKeyOrder = [notifications]

    let notifications: StoreTable
    let mentions: StoreTable
    let posts: StoreTable
    let likes: StoreTable
    let comments: StoreTable
    let edges: StoreTable

    init(store: KeyValueStore) {
        notifications = store.table(Self.notifications)
        mentions = store.table(Self.mentionNotifications)
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
        case .followed, .unfollowed, .followRequested, .followRequestEnded:
            try applyFollow(event, at: envelope, in: transaction)
        case .commentAdded(let event):
            let author = try author(of: event.post, recorded: event.postAuthor, in: transaction)
            let comment = NotificationRecord.CommentPart(id: event.comment, text: event.text, mentions: event.mentions)
            if let author, author != event.author {
                let record = NotificationRecord(
                    kind: .comment, actor: event.author, post: event.post, comment: comment,
                    createdAt: envelope.recordedAt)
                try add(record, for: author, at: envelope.position, in: transaction)
            }
            // The post's author has the comment's own notification.
            try addMentions(
                of: event.mentions.filter { $0 != author }, by: event.author, in: event.post, comment: comment,
                at: envelope, in: transaction)
        case .postCreated(let event):
            try addMentions(
                of: event.mentions.all, by: event.author, in: event.post, comment: nil, at: envelope, in: transaction)
        case .postEdited(let event) where event.captionMentions != nil || event.textMentions != nil:
            try applyMentions(of: event, at: envelope, in: transaction)
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
            try removeMentions(of: event.post, in: transaction)
        case .commentDeleted(let event):
            try remove(for: event.postAuthor, at: event.commentedAt, in: transaction)
            try removeMentions(of: event.post, at: event.commentedAt, in: transaction)
        case .reposted, .userRegistered, .profileEdited, .postEdited, .messageSent, .roomCreated,
            .roomJoined, .roomLeft, .roomMessageSent, .notificationsRead, .conversationRead, .sessionStarted,
            .sessionEnded,
            .passwordChanged, .passwordResetRequested, .passwordResetUnmatched, .blocked, .unblocked, .muted, .unmuted,
            .reportFiled,
            .reportResolved, .userSuspended, .userUnsuspended, .accountDeleted, .erasureCompleted,
            .mediaRemoved, .deviceRegistered, .deviceForgotten, .pushSettingsChanged, .bookmarked, .unbookmarked,
            .wordMuted, .wordUnmuted:
            break
        }
    }

    /// A follow notifies the followee; a request notifies the private account it asks, which accepting answers (the
    /// asker hears of it) and which declining or withdrawing takes back. An unfollow takes its follow's back.
    private func applyFollow(_ event: DomainEvent, at envelope: EventEnvelope, in transaction: StoreTransaction) throws
    {
        switch event {
        case .followed(let event):
            guard let requestedAt = event.requestedAt else {
                try add(
                    NotificationRecord(
                        kind: .follow, actor: event.follower, post: nil, comment: nil, createdAt: envelope.recordedAt),
                    for: event.followee, at: envelope.position, in: transaction)
                return
            }
            // An accepted request: the followee's request notification is answered; the follower hears of it.
            try remove(for: event.followee, at: requestedAt, in: transaction)
            try add(
                NotificationRecord(
                    kind: .followAccepted, actor: event.followee, post: nil, comment: nil,
                    createdAt: envelope.recordedAt),
                for: event.follower, at: envelope.position, in: transaction)
        case .followRequested(let event):
            try add(
                NotificationRecord(
                    kind: .followRequest, actor: event.follower, post: nil, comment: nil,
                    createdAt: envelope.recordedAt),
                for: event.followee, at: envelope.position, in: transaction)
        case .followRequestEnded(let event):
            try remove(for: event.followee, at: event.requestedAt, in: transaction)
        case .unfollowed(let event):
            var edge = ProjectionKey(event.follower)
            edge.append(event.followee)
            guard let since = try event.followedAt ?? transaction.position(under: edge.bytes, in: edges) else { return }
            try remove(for: event.followee, at: since, in: transaction)
        default:
            break
        }
    }

    /// Notifies each of `recipients` (but `actor`) that the post, or the comment on it, written at `envelope`'s
    /// position mentions them.
    private func addMentions(
        of recipients: [UserID], by actor: UserID, in post: PostID, comment: NotificationRecord.CommentPart?,
        at envelope: EventEnvelope, in transaction: StoreTransaction
    ) throws {
        for recipient in recipients where recipient != actor {
            let record = NotificationRecord(
                kind: .mention, actor: actor, post: post, comment: comment, createdAt: envelope.recordedAt)
            try add(record, for: recipient, at: envelope.position, in: transaction)
            var key = ProjectionKey(post)
            key.append(envelope.position)
            key.append(recipient)
            try transaction.put([comment == nil ? 0 : 1], for: key.bytes, in: mentions)
        }
    }

    /// An edit of a post's caption or text: those it no longer mentions lose their notification, and those it mentions
    /// now for the first time get one. Applied before ``Posts``, whose record still has whom the post mentioned.
    private func applyMentions(of event: PostEdited, at envelope: EventEnvelope, in transaction: StoreTransaction)
        throws
    {
        let key = ProjectionKey(event.post).bytes
        guard let old = try transaction.value(for: key, in: posts).map(PostRecord.init(decoding:)) else { return }
        let now = PostMentions(
            caption: event.captionMentions ?? old.mentions.caption, text: event.textMentions ?? old.mentions.text
        ).all
        let prefix = ProjectionKey(event.post).prefix()
        var notified: [(recipient: UserID, key: [UInt8], position: LogPosition)] = []
        try transaction.scan(mentions, prefix: prefix) { key, value in
            if value.first == 0 { notified.append(Self.mentionEntry(key, postPrefixCount: prefix.count)) }
            return true
        }
        for entry in notified where !now.contains(entry.recipient) {
            try remove(for: entry.recipient, at: entry.position, in: transaction)
            try transaction.delete(entry.key, in: mentions)
        }
        let added = now.filter { user in !notified.contains { $0.recipient == user } }
        try addMentions(of: added, by: event.author, in: event.post, comment: nil, at: envelope, in: transaction)
    }

    /// Takes back every mention notification of `post`, or only of its comment at `position`.
    private func removeMentions(of post: PostID, at position: LogPosition? = nil, in transaction: StoreTransaction)
        throws
    {
        let postPrefix = ProjectionKey(post).prefix()
        var prefix = ProjectionKey(post)
        if let position { prefix.append(position) }
        var found: [(recipient: UserID, key: [UInt8], position: LogPosition)] = []
        try transaction.scan(mentions, prefix: position == nil ? postPrefix : prefix.prefix()) { key, _ in
            found.append(Self.mentionEntry(key, postPrefixCount: postPrefix.count))
            return true
        }
        for entry in found {
            try remove(for: entry.recipient, at: entry.position, in: transaction)
            try transaction.delete(entry.key, in: mentions)
        }
    }

    /// An entry of `mention-notifications` read: whom it notified, its key, the position it notified them at.
    private static func mentionEntry(_ key: UnsafeRawBufferPointer, postPrefixCount: Int) -> (
        recipient: UserID, key: [UInt8], position: LogPosition
    ) {
        (
            ProjectionKey.user(afterPositionIn: key, prefixCount: postPrefixCount), Array(key),
            ProjectionKey.position(in: key, at: postPrefixCount)
        )
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
        case like, follow, comment, repost, mention
        case followRequest = "follow_request"
        case followAccepted = "follow_accepted"
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

    /// Whether `user`'s muted words hide the notification: the post it is about holds one (unless it is theirs), or
    /// the comment it quotes.
    private func mutedWordsHide(_ record: NotificationRecord, from user: UserID) throws -> Bool {
        guard try mutesWords(user) else { return false }
        if let part = record.comment, try mutedWordsHide([part.text], by: record.actor, from: user) { return true }
        guard let id = record.post, let post = try postRecord(id) else { return false }
        return try mutedWordsHide([post.caption, post.text], by: post.author, from: user)
    }

    private func notification(of user: UserID, at position: LogPosition, record value: UnsafeRawBufferPointer) throws
        -> Notification?
    {
        let record = try NotificationRecord(decoding: Array(value))
        // What a blocked or muted user did notifies no one who hid them.
        guard try !hides(record.actor, from: user, muting: true), try !mutedWordsHide(record, from: user) else {
            return nil
        }
        let actor = try requireSummary(record.actor)
        var post: Notification.PostPart?
        if let id = record.post {
            let found = try postRecord(id)
            // A mention in a private account's post is for its followers alone. Most notifications are about the
            // user's own posts, whose author's profile need not be read.
            if let author = found?.author, author != user, let profile = try profileRecord(author),
                try isPrivate(author, profile, to: user)
            {
                return nil
            }
            post = Notification.PostPart(id: id, image: found?.media.first?.id)
        }
        var comment: Comment?
        if let post = record.post, let part = record.comment {
            comment = Comment(
                id: part.id, postID: post, author: actor, text: part.text, createdAt: record.createdAt,
                mentions: try visibleSummaries(of: part.mentions, viewer: user))
        }
        let kind: Notification.Kind =
            switch record.kind {
            case .like: .like
            case .follow: .follow
            case .comment: .comment
            case .repost: .repost
            case .mention: .mention
            case .followRequest: .followRequest
            case .followAccepted: .followAccepted
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
        case mention = 5
        case followRequest = 6
        case followAccepted = 7
    }

    struct CommentPart: Hashable {
        var id: CommentID
        var text: String
        var mentions: [UserID]
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
        writer.write(mentions: comment?.mentions ?? [])
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
        createdAt = EventTime(millisecondsSince1970: try reader.readInt64())
        let mentions = try reader.readMentions()
        comment = commentID.map { CommentPart(id: $0, text: commentText ?? "", mentions: mentions) }
        try reader.finish()
    }
}
