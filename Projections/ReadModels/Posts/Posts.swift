import ChorusDomain
import ChorusLog
import ChorusStorage

/// Posts, who liked and who plainly reposted them, and the posts and likes tabs of profiles (their counts:
/// ``PostCounters``; their queries: Posts+Queries.swift).
struct Posts: ReadModel {
    /// post → ``PostRecord``
    static let posts: StoreTableDefinition = "posts"
    /// post, user → position of the like
    static let postLikes: StoreTableDefinition = "post-likes"
    /// user, position → post (the posts tab, newest first): the user's posts at their own positions, and the posts
    /// they reposted plainly at the positions of their reposts
    static let userPosts: StoreTableDefinition = "user-posts"
    /// user, position of the like → post (the likes tab)
    static let userLikes: StoreTableDefinition = "user-likes"
    /// post, position of a plain repost → the user who reposted it (who reposted what a feed shows at a position)
    static let postReposts: StoreTableDefinition = "post-reposts"
    /// user, post → position of the user's plain repost of it (whether a viewer reposted a post)
    static let userReposts: StoreTableDefinition = "user-reposts"

    static let tables = [posts, postLikes, userPosts, userLikes, postReposts, userReposts]
    /// An unlike recorded before it carried the like's position (schema version 1) reads `post-likes`, which merges
    /// what a build loaded into it so far: slower, but only for old logs.
    static let tablesLoadedInKeyOrder = [userLikes, userPosts, postLikes, postReposts, userReposts]

    let posts: StoreTable
    let likes: StoreTable
    let userPosts: StoreTable
    let userLikes: StoreTable
    let postReposts: StoreTable
    let userReposts: StoreTable

    init(store: KeyValueStore) {
        posts = store.table(Self.posts)
        likes = store.table(Self.postLikes)
        userPosts = store.table(Self.userPosts)
        userLikes = store.table(Self.userLikes)
        postReposts = store.table(Self.postReposts)
        userReposts = store.table(Self.userReposts)
    }

    func apply(_ event: DomainEvent, at envelope: EventEnvelope, in transaction: StoreTransaction) throws {
        switch event {
        case .postCreated(let event):
            let record = PostRecord(
                author: event.author, caption: event.caption, text: event.text, media: event.media,
                repostOf: event.repostOf, createdAt: envelope.recordedAt, editedAt: nil, position: envelope.position,
                replies: event.replies, mentions: event.mentions)
            try transaction.put(record.encoded(), for: ProjectionKey(event.post).bytes, in: posts)
            var tab = ProjectionKey(event.author)
            tab.append(envelope.position)
            try transaction.put(Array(event.post.rawValue.utf8), for: tab.bytes, in: userPosts)
        case .postEdited(let event):
            try applyEdit(event, at: envelope, in: transaction)
        case .postDeleted(let event):
            try transaction.delete(ProjectionKey(event.post).bytes, in: posts)
            var tab = ProjectionKey(event.author)
            tab.append(event.postedAt)
            try transaction.delete(tab.bytes, in: userPosts)
            // Its likes go with it, from its likers' tabs too.
            let prefix = ProjectionKey(event.post).prefix()
            var liked: [(like: [UInt8], tab: [UInt8])] = []
            try transaction.scan(likes, prefix: prefix) { key, value in
                var tab = ProjectionKey(bytes: UnsafeRawBufferPointer(rebasing: key[prefix.count...]))
                tab.append(PositionValue.decode(value))
                liked.append((Array(key), tab.bytes))
                return true
            }
            for entry in liked {
                try transaction.delete(entry.like, in: likes)
                try transaction.delete(entry.tab, in: userLikes)
            }
        case .liked(let event):
            var like = ProjectionKey(event.post)
            like.append(event.user)
            try transaction.put(PositionValue.encode(envelope.position), for: like.bytes, in: likes)
            var tab = ProjectionKey(event.user)
            tab.append(envelope.position)
            try transaction.put(Array(event.post.rawValue.utf8), for: tab.bytes, in: userLikes)
        case .unliked(let event):
            var like = ProjectionKey(event.post)
            like.append(event.user)
            // Unlikes recorded before they carried the like's position read it back (see ``tablesLoadedInKeyOrder``).
            guard let since = try event.likedAt ?? transaction.position(under: like.bytes, in: likes) else { return }
            try transaction.delete(like.bytes, in: likes)
            var tab = ProjectionKey(event.user)
            tab.append(since)
            try transaction.delete(tab.bytes, in: userLikes)
        case .reposted(let event):
            let keys = RepostKeys(event.user, event.post, at: envelope.position)
            try transaction.put(Array(event.user.rawValue.utf8), for: keys.byPost, in: postReposts)
            try transaction.put(PositionValue.encode(envelope.position), for: keys.byUser, in: userReposts)
            try transaction.put(Array(event.post.rawValue.utf8), for: keys.tab, in: userPosts)
        case .unreposted(let event):
            let keys = RepostKeys(event.user, event.post, at: event.repostedAt)
            try transaction.delete(keys.byPost, in: postReposts)
            try transaction.delete(keys.byUser, in: userReposts)
            try transaction.delete(keys.tab, in: userPosts)
        case .userRegistered, .profileEdited, .commentAdded, .commentDeleted, .followed, .unfollowed, .messageSent,
            .roomCreated, .roomJoined, .roomLeft, .roomMessageSent, .notificationsRead, .conversationRead,
            .sessionStarted,
            .sessionEnded, .passwordChanged, .passwordResetRequested, .passwordResetUnmatched, .blocked, .unblocked,
            .muted, .unmuted,
            .reportFiled, .reportResolved, .userSuspended, .userUnsuspended, .accountDeleted, .erasureCompleted,
            .mediaRemoved, .deviceRegistered, .deviceForgotten, .pushSettingsChanged, .bookmarked, .unbookmarked,
            .wordMuted, .wordUnmuted, .followRequested, .followRequestEnded:
            break
        }
    }

    private func applyEdit(_ event: PostEdited, at envelope: EventEnvelope, in transaction: StoreTransaction) throws {
        let key = ProjectionKey(event.post).bytes
        guard var record = try transaction.value(for: key, in: posts).map(PostRecord.init(decoding:)) else {
            throw ProjectionError.inconsistent("post \(event.post) was edited at \(envelope.position) but is not there")
        }
        if let caption = event.caption { record.caption = caption }
        if let text = event.text { record.text = text }
        if let alts = event.alts {
            guard alts.count == record.media.count else {
                throw ProjectionError.inconsistent(
                    "post \(event.post) has \(record.media.count) images, but \(alts.count) alt texts at \(envelope.position)"
                )
            }
            for (index, alt) in alts.enumerated() { record.media[index].alt = alt }
        }
        if let replies = event.replies { record.replies = replies }
        if let mentions = event.captionMentions { record.mentions.caption = mentions }
        if let mentions = event.textMentions { record.mentions.text = mentions }
        if event.changesContent { record.editedAt = envelope.recordedAt }
        try transaction.put(record.encoded(), for: key, in: posts)
    }
}

extension StoreTransaction {
    /// Whether `user` plainly reposts `post`, as ``Posts``' `user-reposts` says: the counters ask before ``Posts`` applies
    /// a repost or an unrepost.
    func hasReposted(_ user: UserID, _ post: PostID, in userReposts: StoreTable) throws -> Bool {
        var repost = ProjectionKey(user)
        repost.append(post)
        return try withValue(for: repost.bytes, in: userReposts) { $0 != nil }
    }
}

/// The keys a plain repost is kept under: `post-reposts`, `user-reposts` and the reposter's `user-posts` entry.
struct RepostKeys {
    let byPost: [UInt8]
    let byUser: [UInt8]
    let tab: [UInt8]

    init(_ user: UserID, _ post: PostID, at position: LogPosition) {
        var byPost = ProjectionKey(post)
        byPost.append(position)
        var byUser = ProjectionKey(user)
        byUser.append(post)
        var tab = ProjectionKey(user)
        tab.append(position)
        (self.byPost, self.byUser, self.tab) = (byPost.bytes, byUser.bytes, tab.bytes)
    }
}

/// A post as stored: its author by id only, so that whoever shows it joins the author's profile as of then; its
/// counters apart.
struct PostRecord: Hashable {
    var author: UserID
    var caption: String
    var text: String
    var media: [PostImage]
    var repostOf: PostID?
    var createdAt: EventTime
    /// When the caption, text or alt texts last changed; nil if never.
    var editedAt: EventTime?
    var position: LogPosition
    /// Who may comment besides its author.
    var replies: ReplyPolicy
    var mentions: PostMentions

    func encoded() -> [UInt8] {
        var writer = PayloadWriter()
        writer.write(author)
        writer.write(caption)
        writer.write(text)
        writer.write(bytes: StoredImages.encoded(media))
        writer.write(repostOf)
        writer.write(createdAt.millisecondsSince1970)
        // Milliseconds since 1970 plus one, 0 for never: one fixed-size field.
        writer.write(editedAt.map { $0.millisecondsSince1970 + 1 } ?? 0)
        writer.write(position.rawValue)
        writer.write(replies.code)
        writer.write(mentions: mentions.caption)
        writer.write(mentions: mentions.text)
        return writer.bytes
    }

    init(
        author: UserID, caption: String, text: String, media: [PostImage], repostOf: PostID?, createdAt: EventTime,
        editedAt: EventTime?, position: LogPosition, replies: ReplyPolicy = .everyone, mentions: PostMentions = .none
    ) {
        self.author = author
        self.caption = caption
        self.text = text
        self.media = media
        self.repostOf = repostOf
        self.createdAt = createdAt
        self.editedAt = editedAt
        self.position = position
        self.replies = replies
        self.mentions = mentions
    }

    /// Only the author of an encoded record, which comes first: notifications need no more of a post.
    static func author(decoding bytes: [UInt8]) throws -> UserID {
        try bytes.withUnsafeBytes { UserID(unchecked: String(copying: try InPlace($0).author)) }
    }

    /// An encoded record read in place (see ``StoredPost``); the one reading of the format. Its buffers are as valid
    /// as the one it was read from.
    struct InPlace {
        let author: UnsafeRawBufferPointer
        let caption: UnsafeRawBufferPointer
        let text: UnsafeRawBufferPointer
        /// The images' ids and alt texts (``StoredImages``), checked.
        let media: UnsafeRawBufferPointer
        let repostOf: UnsafeRawBufferPointer?
        let createdAt: EventTime
        let editedAt: EventTime?
        let position: LogPosition
        let replies: ReplyPolicy
        let mentions: PostMentions

        init(_ bytes: UnsafeRawBufferPointer) throws {
            var cursor = PayloadCursor(bytes)
            author = try cursor.readUTF8()
            caption = try cursor.readUTF8()
            text = try cursor.readUTF8()
            media = try StoredImages.checked(try cursor.readUTF8())
            repostOf = try cursor.readOptionalUTF8()
            createdAt = EventTime(millisecondsSince1970: try cursor.readInt64())
            let edited = try cursor.readInt64()
            editedAt = edited == 0 ? nil : EventTime(millisecondsSince1970: edited - 1)
            position = LogPosition(UInt64(bitPattern: try cursor.readInt64()))
            replies = try ReplyPolicy(code: try cursor.readByte())
            mentions = PostMentions(caption: try cursor.readMentions(), text: try cursor.readMentions())
            try cursor.finish()
        }
    }

    init(decoding bytes: [UInt8]) throws {
        // Copied inside the closure: the pointers of an `InPlace` are valid only there (past its last use `bytes`
        // may be freed, and a copy made later read freed memory).
        self = try bytes.withUnsafeBytes { PostRecord(try InPlace($0)) }
    }

    /// A copy of a record read in place.
    init(_ record: InPlace) {
        author = UserID(unchecked: String(copying: record.author))
        caption = String(copying: record.caption)
        text = String(copying: record.text)
        media = StoredImages(record.media).copies()
        repostOf = record.repostOf.map { PostID(unchecked: String(copying: $0)) }
        createdAt = record.createdAt
        editedAt = record.editedAt
        position = record.position
        replies = record.replies
        mentions = record.mentions
    }
}
