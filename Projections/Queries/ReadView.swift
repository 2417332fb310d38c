import ChorusDomain
import ChorusLog

/// The read models at one position: every answer from one view reflects that position, and every user embedded in
/// it is that user's profile as of that position (read models keep user ids only, and join the profile here).
public struct ReadView {
    let transaction: StoreTransaction
    let tables: ProjectionTables
    /// The log position the whole view reflects.
    public let position: LogPosition
    /// Profiles already read in this view: a feed page names the same few authors again and again.
    private let summaries = SummaryMemo()

    init(transaction: StoreTransaction, tables: ProjectionTables, position: LogPosition) {
        self.transaction = transaction
        self.tables = tables
        self.position = position
    }

    // MARK: Users

    public func userSummary(_ user: UserID) throws -> UserSummary? {
        if let known = summaries.known[user] { return known }
        // Copied while the key it was looked up by lives.
        guard let found = try ProjectionKey(user).bytes.withUnsafeBytes({ try summaryInPlace(of: $0).map(UserSummary.init) })
        else { return nil }
        summaries.known[user] = found
        return found
    }

    /// `viewer` decides `isFollowed`, `isMe` and whether the e-mail is shown.
    public func profile(_ user: UserID, viewer: UserID?) throws -> Profile? {
        guard let record = try profileRecord(user) else { return nil }
        let isMe = viewer == user
        let counters = try transaction.counters(
            ProjectionKey(user).bytes, count: ProfileCounters.counterCount, in: tables.profileCounters)
        return Profile(
            summary: summary(user, record), bio: record.bio, followers: counters[ProfileCounters.followersCounter],
            following: counters[ProfileCounters.followingCounter], posts: counters[ProfileCounters.postsCounter],
            isFollowed: try viewer.map { try follows($0, user) } ?? false, isMe: isMe,
            email: isMe ? record.email : nil)
    }

    /// Whether `follower` follows `followee`.
    public func follows(_ follower: UserID, _ followee: UserID) throws -> Bool {
        var edge = ProjectionKey(follower)
        edge.append(followee)
        return try transaction.withValue(for: edge.bytes, in: tables.followEdges) { $0 != nil }
    }

    /// The followers tab, newest first; nil for an unknown user.
    public func followers(of user: UserID, page: PageRequest) throws -> Page<UserSummary>? {
        try userTab(tables.followers, of: user, page: page)
    }

    /// The following tab, newest first; nil for an unknown user.
    public func following(of user: UserID, page: PageRequest) throws -> Page<UserSummary>? {
        try userTab(tables.following, of: user, page: page)
    }

    /// Users whose name or major contains `query` (NFC, without regard to case); a query made only of Hangul initial
    /// consonants matches names by their syllables' initials (`ㄱㅁㅅ` finds `김민수`). Exact matches come first,
    /// then prefixes, then the rest, each by name; never the caller.
    public func searchUsers(_ query: String, caller: UserID?, page: PageRequest) throws -> Page<UserSummary> {
        let folded = SearchText.fold(query)
        guard !folded.isEmpty else { return Page(items: [], nextCursor: nil) }
        let byInitials = SearchText.isChoseongOnly(folded)
        var matches: [SearchMatch] = []
        try transaction.scan(tables.userSearch) { key, value in
            let id = String(decoding: key, as: UTF8.self)
            guard id != caller?.rawValue else { return true }
            let entry = try SearchEntry(decoding: Array(value))
            if let rank = entry.rank(for: folded, byInitials: byInitials) {
                matches.append(SearchMatch(rank: rank, name: entry.foldedName, id: id))
            }
            return true
        }
        matches.sort()
        var start = matches.startIndex
        if let cursor = page.cursor {
            guard let after = SearchMatch(cursor: cursor) else { throw ProjectionError.badCursor }
            start = matches.firstIndex { $0 > after } ?? matches.endIndex
        }
        let slice = matches[start...].prefix(page.limit)
        let items = try slice.map { try requireSummary(UserID(unchecked: $0.id)) }
        let hasMore = slice.endIndex < matches.endIndex
        return Page(items: items, nextCursor: hasMore ? slice.last.map { PageCursor(bytes: $0.cursorBytes) } : nil)
    }

    // MARK: Posts

    /// Every post answers in two forms: ``StoredPost``, read in place, for answers written out inside the snapshot
    /// (the HTTP API), and ``Post``, its copy, for everyone else.
    public func post(_ post: PostID, viewer: UserID?) throws -> Post? {
        try storedPost(post, viewer: viewer).map(Post.init)
    }

    public func storedPost(_ post: PostID, viewer: UserID?) throws -> StoredPost? {
        // The key as the table holds it, so that the answer's id lies in the snapshot too.
        let key = ProjectionKey(post).bytes
        var found: UnsafeRawBufferPointer?
        try transaction.scan(tables.posts, from: key) { stored, _ in
            if stored.elementsEqual(key) { found = stored }
            return false
        }
        return try found.flatMap { try storedPost(at: $0, viewer: viewer) }
    }

    /// Every post, newest first.
    public func homeFeed(viewer: UserID?, page: PageRequest) throws -> Page<Post> {
        try storedHomeFeed(viewer: viewer, page: page).map(Post.init)
    }

    public func storedHomeFeed(viewer: UserID?, page: PageRequest) throws -> Page<StoredPost> {
        try transaction.page(tables.home, prefix: [], order: .newestFirst, request: page) { _, value in
            try storedPost(at: value, viewer: viewer)
        }
    }

    /// Posts of the users `user` follows, and `user`'s own, newest first.
    public func followingFeed(of user: UserID, page: PageRequest) throws -> Page<Post> {
        try storedFollowingFeed(of: user, page: page).map(Post.init)
    }

    public func storedFollowingFeed(of user: UserID, page: PageRequest) throws -> Page<StoredPost> {
        try PositionChunks(table: tables.feeds).page(of: user, request: page, in: transaction) { position in
            let post = try ProjectionKey.withPositionKey(position) { try transaction.valueInPlace(for: $0, in: tables.home) }
            guard let post else {
                throw ProjectionError.inconsistent("no post at position \(position) of the feed of \(user)")
            }
            return try storedPost(at: post, viewer: user)
        }
    }

    /// The posts tab; nil for an unknown user.
    public func posts(by user: UserID, viewer: UserID?, page: PageRequest) throws -> Page<Post>? {
        try storedPosts(by: user, viewer: viewer, page: page)?.map(Post.init)
    }

    public func storedPosts(by user: UserID, viewer: UserID?, page: PageRequest) throws -> Page<StoredPost>? {
        guard try profileRecord(user) != nil else { return nil }
        return try postPage(tables.userPosts, owner: user, viewer: viewer, page: page)
    }

    /// The likes tab: posts `user` liked, most recently liked first; nil for an unknown user.
    public func likedPosts(by user: UserID, viewer: UserID?, page: PageRequest) throws -> Page<Post>? {
        try storedLikedPosts(by: user, viewer: viewer, page: page)?.map(Post.init)
    }

    public func storedLikedPosts(by user: UserID, viewer: UserID?, page: PageRequest) throws -> Page<StoredPost>? {
        guard try profileRecord(user) != nil else { return nil }
        return try postPage(tables.userLikes, owner: user, viewer: viewer, page: page)
    }

    /// Comments of a post, oldest first unless asked otherwise; nil for an unknown post.
    public func comments(on post: PostID, order: SortOrder = .oldestFirst, page: PageRequest) throws -> Page<Comment>? {
        guard try postRecord(post) != nil else { return nil }
        return try transaction.page(tables.comments, prefix: ProjectionKey(post).prefix(), order: order, request: page) {
            _, value in
            let record = try CommentRecord(decoding: Array(value))
            return Comment(
                id: record.id, postID: post, author: try requireSummary(record.author), text: record.text,
                createdAt: record.createdAt)
        }
    }

    // MARK: Notifications and messages

    /// Likes, follows and comments by others on `user`'s things, newest first; `actorIsFollowed` is `user`'s view.
    public func notifications(of user: UserID, page: PageRequest) throws -> Page<Notification> {
        let prefix = ProjectionKey(user).prefix()
        return try transaction.page(tables.notifications, prefix: prefix, order: .newestFirst, request: page) {
            key, value in
            let position = ProjectionKey.position(in: key, at: prefix.count)
            let record = try NotificationRecord(decoding: Array(value))
            let actor = try requireSummary(record.actor)
            let post = try record.post.map { id in Notification.PostPart(id: id, image: try postRecord(id)?.image) }
            var comment: Comment?
            if let post = record.post, let part = record.comment {
                comment = Comment(id: part.id, postID: post, author: actor, text: part.text, createdAt: record.createdAt)
            }
            let kind: Notification.Kind =
                switch record.kind {
                case .like: .like
                case .follow: .follow
                case .comment: .comment
                }
            return Notification(
                id: PageCursor(position: position).description, kind: kind, actor: actor,
                actorIsFollowed: try follows(user, record.actor), post: post, comment: comment,
                createdAt: record.createdAt)
        }
    }

    /// The recent-messages list: one row per partner, latest activity first.
    public func conversations(of user: UserID, page: PageRequest) throws -> Page<Conversation> {
        let prefix = ProjectionKey(user).prefix()
        return try transaction.page(tables.recent, prefix: prefix, order: .newestFirst, request: page) { key, value in
            let partner = UserID(unchecked: String(decoding: value, as: UTF8.self))
            var messageKey = Conversations.pairPrefix(user, partner)
            messageKey.append(ProjectionKey.position(in: key, at: prefix.count))
            guard let stored = try transaction.value(for: messageKey.bytes, in: tables.messages) else {
                throw ProjectionError.inconsistent("no message behind the conversation of \(user) with \(partner)")
            }
            return Conversation(partner: try requireSummary(partner), lastMessage: try message(MessageRecord(decoding: stored)))
        }
    }

    /// The messages between `user` and `partner`, newest first unless asked otherwise.
    public func messages(between user: UserID, and partner: UserID, order: SortOrder = .newestFirst, page: PageRequest)
        throws -> Page<Message>
    {
        try transaction.page(
            tables.messages, prefix: Conversations.pairPrefix(user, partner).prefix(), order: order, request: page
        ) { _, value in try message(MessageRecord(decoding: Array(value))) }
    }

    private func message(_ record: MessageRecord) throws -> Message {
        Message(
            id: record.id, from: try requireSummary(record.from), to: try requireSummary(record.to), text: record.text,
            createdAt: record.createdAt)
    }

    // MARK: Joins

    private func profileRecord(_ user: UserID) throws -> ProfileRecord? {
        try transaction.value(for: ProjectionKey(user).bytes, in: tables.profiles).map(ProfileRecord.init(decoding:))
    }

    private func postRecord(_ post: PostID) throws -> PostRecord? {
        try transaction.value(for: ProjectionKey(post).bytes, in: tables.posts).map(PostRecord.init(decoding:))
    }

    private func summary(_ user: UserID, _ record: ProfileRecord) -> UserSummary {
        UserSummary(id: user, name: record.name, major: record.major, profileImage: record.profileImage)
    }

    /// Users named by the read models exist: the log registered them before anything could name them.
    private func requireSummary(_ user: UserID) throws -> UserSummary {
        guard let summary = try userSummary(user) else { throw ProjectionError.inconsistent("no profile for \(user)") }
        return summary
    }

    /// The post whose id is `id`, a buffer in the snapshot (a key or value of a table), with the post it reposts.
    private func storedPost(at id: UnsafeRawBufferPointer, viewer: UserID?) throws -> StoredPost? {
        guard let (post, repostOf) = try storedFields(at: id, viewer: viewer) else { return nil }
        return StoredPost(post: post, repostOf: try repostOf.flatMap { try storedFields(at: $0, viewer: viewer)?.fields })
    }

    private func storedFields(at id: UnsafeRawBufferPointer, viewer: UserID?) throws -> (
        fields: StoredPost.Fields, repostOf: UnsafeRawBufferPointer?
    )? {
        guard let stored = try transaction.valueInPlace(for: id, in: tables.posts) else { return nil }
        let record = try PostRecord.InPlace(stored)
        let counters = try transaction.countersInPlace(id, in: tables.postCounters)
        var hasLiked = false
        // Most posts have no likes, and then no one need be looked up.
        if let viewer, counters[PostCounters.likesCounter] > 0 {
            var like = ProjectionKey(bytes: id)
            like.append(viewer)
            hasLiked = try transaction.withValue(for: like.bytes, in: tables.postLikes) { $0 != nil }
        }
        guard let author = try storedSummary(of: record.author) else {
            throw ProjectionError.inconsistent("no profile for the author of \(String(copying: id))")
        }
        let fields = StoredPost.Fields(
            id: id, author: author, caption: record.caption, text: record.text, image: record.image,
            createdAt: record.createdAt, likes: counters[PostCounters.likesCounter],
            comments: counters[PostCounters.commentsCounter], hasLiked: hasLiked)
        return (fields, record.repostOf)
    }

    /// The summary of the user whose id is `user`, a buffer in the snapshot, read in place; remembered for the rest
    /// of the view.
    private func storedSummary(of user: UnsafeRawBufferPointer) throws -> StoredUserSummary? {
        if let known = summaries.stored.first(where: { $0.id.starts(withBytes: user) && $0.id.count == user.count }) {
            return known
        }
        guard let summary = try summaryInPlace(of: user) else { return nil }
        summaries.stored.append(summary)
        return summary
    }

    /// The summary of the user whose id is `user`, read in place, its id being `user` itself.
    private func summaryInPlace(of user: UnsafeRawBufferPointer) throws -> StoredUserSummary? {
        try transaction.valueInPlace(for: user, in: tables.profiles).map { try ProfileRecord.InPlace($0).summary(of: user) }
    }

    private func postPage(_ table: StoreTable, owner: UserID, viewer: UserID?, page: PageRequest) throws -> Page<StoredPost> {
        try transaction.page(table, prefix: ProjectionKey(owner).prefix(), order: .newestFirst, request: page) {
            _, value in
            try storedPost(at: value, viewer: viewer)
        }
    }

    private func userTab(_ table: StoreTable, of user: UserID, page: PageRequest) throws -> Page<UserSummary>? {
        guard try profileRecord(user) != nil else { return nil }
        let prefix = ProjectionKey(user).prefix()
        return try transaction.page(table, prefix: prefix, order: .newestFirst, request: page) { key, _ in
            try requireSummary(ProjectionKey.user(afterPositionIn: key, prefixCount: prefix.count))
        }
    }
}

/// The read models' tables, looked up once.
struct ProjectionTables: Sendable {
    let checkpoint: StoreTable
    let profiles: StoreTable
    let profileCounters: StoreTable
    let followEdges: StoreTable
    let followers: StoreTable
    let following: StoreTable
    let posts: StoreTable
    let postCounters: StoreTable
    let postLikes: StoreTable
    let userPosts: StoreTable
    let userLikes: StoreTable
    let comments: StoreTable
    let home: StoreTable
    let feeds: StoreTable
    let notifications: StoreTable
    let messages: StoreTable
    let recent: StoreTable
    let userSearch: StoreTable

    init(store: KeyValueStore) {
        checkpoint = store.table(Tables.checkpoint)
        profiles = store.table(Tables.profiles)
        profileCounters = store.table(Tables.profileCounters)
        followEdges = store.table(Tables.followEdges)
        followers = store.table(Tables.followers)
        following = store.table(Tables.following)
        posts = store.table(Tables.posts)
        postCounters = store.table(Tables.postCounters)
        postLikes = store.table(Tables.postLikes)
        userPosts = store.table(Tables.userPosts)
        userLikes = store.table(Tables.userLikes)
        comments = store.table(Tables.comments)
        home = store.table(Tables.home)
        feeds = store.table(Tables.feeds)
        notifications = store.table(Tables.notifications)
        messages = store.table(Tables.messages)
        recent = store.table(Tables.recent)
        userSearch = store.table(Tables.userSearch)
    }
}

/// One search hit, in result order: rank, then folded name, then id; also what a search cursor holds.
struct SearchMatch: Comparable {
    let rank: UInt8
    let name: String
    let id: String

    init(rank: UInt8, name: String, id: String) {
        self.rank = rank
        self.name = name
        self.id = id
    }

    init?(cursor: PageCursor) {
        let bytes = cursor.bytes
        guard let rank = bytes.first, let separator = bytes.dropFirst().firstIndex(of: 0) else { return nil }
        self.rank = rank
        name = String(decoding: bytes[1..<separator], as: UTF8.self)
        id = String(decoding: bytes[(separator + 1)...], as: UTF8.self)
    }

    var cursorBytes: [UInt8] { [rank] + Array(name.utf8) + [0] + Array(id.utf8) }

    static func < (lhs: SearchMatch, rhs: SearchMatch) -> Bool {
        (lhs.rank, lhs.name, lhs.id) < (rhs.rank, rhs.name, rhs.id)
    }
}

/// The user summaries one view has read; a view lives inside one read transaction, so they cannot change.
private final class SummaryMemo {
    var known: [UserID: UserSummary] = [:]
    /// In place; a page names a few dozen users at most, so a list searched from the start does.
    var stored: [StoredUserSummary] = []
}
