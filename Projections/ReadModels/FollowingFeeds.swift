import ChorusDomain
import ChorusLog
import ChorusStorage

/// Each user's Following feed, materialised on write: a post (or a plain repost) goes into its author's (reposter's)
/// feed and each follower's; a follow back-fills the followee's posts and reposts (those ``FeedFanOut`` fanned out);
/// an unfollow takes them out. A feed is the sorted list of its posts' positions, in ``PositionChunks``, so a back-filled
/// post lands where it belongs in time; ``HomeTimeline`` maps a position to its post.
///
/// Hybrid: the posts ``FeedFanOut`` holds back (an author's with many followers) go into no feed. Instead, once an
/// author holds back a post, each reader's feed that shows the author (theirs, their followers') lists the author in
/// `feed-merges`, and reading the feed merges the author's held-back posts into its materialised positions. Either
/// way a feed reads the same.
///
/// Reads ``Profiles``' `followers`, which the events handled here do not change, and ``FeedFanOut``'s held-back and
/// fanned-out posts, which it changes first.
///
/// Derived: whatever the order of follows, unfollows and posts, a feed holds exactly the posts of the user and of
/// everyone the user follows that were not held back, so a build from an empty store joins `following` with
/// `fanned-out-posts` once at the end instead of fanning out every post (6 feed entries per event of the demo log,
/// most of a replay's work).
struct FollowingFeeds: DerivedReadModel {
    /// user, first position of the chunk → positions of posts (``PositionChunks``)
    static let feeds: StoreTableDefinition = "feed-chunks"
    /// reader, author → empty: the authors whose held-back posts the reader's feed merges (the reader and those they
    /// follow, once they hold back any)
    static let merges: StoreTableDefinition = "feed-merges"
    static let tables = [feeds, merges]

    let feeds: PositionChunks
    let merges: StoreTable
    let heldBack: HeldBackPosts
    let fannedOut: StoreTable
    let profiles: StoreTable
    let followers: StoreTable
    let following: StoreTable

    init(store: KeyValueStore) {
        feeds = PositionChunks(table: store.table(Self.feeds))
        merges = store.table(Self.merges)
        heldBack = HeldBackPosts(table: store.table(FeedFanOut.heldBack))
        fannedOut = store.table(FeedFanOut.fannedOut)
        profiles = store.table(Profiles.profiles)
        followers = store.table(Profiles.followers)
        following = store.table(Profiles.following)
    }

    func apply(_ event: DomainEvent, at envelope: EventEnvelope, in transaction: StoreTransaction) throws {
        switch event {
        case .postCreated(let event):
            try publish(envelope.position, of: event.author, in: transaction)
        case .reposted(let event):
            // As a post of the reposter's, at the repost's position.
            try publish(envelope.position, of: event.user, in: transaction)
        case .unreposted(let event):
            try takeOut(event.repostedAt, of: event.user, in: transaction)
        case .postDeleted(let event):
            try takeOut(event.postedAt, of: event.author, in: transaction)
        case .followed(let event):
            let (follower, followee) = (Array(event.follower.rawValue.utf8), Array(event.followee.rawValue.utf8))
            let posts = try fannedOutPositions(of: followee, in: transaction)
            try feeds.insert(posts.map { LogPosition($0) }, for: follower, in: transaction)
            if try heldBack.holdsAny(of: followee, in: transaction) {
                try transaction.put([], for: mergeKey(follower, followee), in: merges)
            }
        case .unfollowed(let event):
            let (follower, followee) = (Array(event.follower.rawValue.utf8), Array(event.followee.rawValue.utf8))
            let posts = try fannedOutPositions(of: followee, in: transaction)
            try feeds.remove(posts.map { LogPosition($0) }, for: follower, in: transaction)
            try transaction.delete(mergeKey(follower, followee), in: merges)
        case .userRegistered, .profileEdited, .postEdited, .liked, .unliked, .commentAdded, .commentDeleted,
            .messageSent, .roomCreated, .roomJoined, .roomLeft, .roomMessageSent, .notificationsRead, .conversationRead,
            .sessionStarted, .sessionEnded,
            .passwordChanged, .passwordResetRequested, .passwordResetUnmatched, .blocked,
            .unblocked, .muted, .unmuted, .reportFiled, .reportResolved, .userSuspended, .userUnsuspended,
            .accountDeleted, .erasureCompleted,
            .mediaRemoved, .deviceRegistered, .deviceForgotten, .pushSettingsChanged, .bookmarked, .unbookmarked,
            .wordMuted, .wordUnmuted, .followRequested, .followRequestEnded:
            break
        }
    }

    func derive(in transaction: StoreTransaction) throws {
        let holdingBack = try authorsHoldingBack(in: transaction)
        var feed: [UInt64] = []
        var recentAuthors = AuthorPositions(budget: Self.derivationBudget)
        // Users in key order, so that each feed and each reader's merges are appended to their tables.
        try transaction.scan(profiles) { user, _ in
            // following: follower, position, followee — the followee's id is what follows the position.
            let prefix = Array(user) + [0]
            var authors = [Array(user)]
            try transaction.scan(following, prefix: prefix) { key, _ in
                authors.append(Array(key[(prefix.count + 9)...]))
                return true
            }
            feed.removeAll(keepingCapacity: true)
            for author in authors {
                feed += try recentAuthors.positions(of: author) { try fannedOutPositions(of: author, in: transaction) }
            }
            feed.sort()
            try feeds.write(feed, for: user, append: true, in: transaction)
            for author in authors.filter(holdingBack.contains).sorted(by: { $0.lexicographicallyPrecedes($1) }) {
                try transaction.put([], for: prefix + author, in: merges, append: true)
            }
            return true
        }
    }

    /// Positions a derivation keeps of the authors it has read (8 bytes each): a few popular accounts are followed
    /// by most users, and reading their posts once instead of once per follower saves most of the join's reads.
    static let derivationBudget = 1 << 18

    /// Puts the post or repost `owner` made at `position` into their feed and each follower's, unless it is held back:
    /// then, if it is the owner's first held back, those feeds start merging the owner's. The newest position of the
    /// log is the newest of every feed: each is an append.
    private func publish(_ position: LogPosition, of owner: UserID, in transaction: StoreTransaction) throws {
        let owner = Array(owner.rawValue.utf8)
        guard try heldBack.contains(position, of: owner, in: transaction) else {
            for reader in try readers(of: owner, in: transaction) {
                try feeds.append(position, for: reader, in: transaction)
            }
            return
        }
        // The owner's own feed merges them exactly when every follower's does.
        guard try transaction.value(for: mergeKey(owner, owner), in: merges) == nil else { return }
        for reader in try readers(of: owner, in: transaction) {
            try transaction.put([], for: mergeKey(reader, owner), in: merges)
        }
    }

    /// Takes the post or repost `owner` made at `position` out of the feeds that hold it: theirs and their followers'
    /// (a follow back-fills, an unfollow takes out). One held back is in no feed, and was in the owner's own exactly
    /// when it was fanned out; once the owner's last held-back post is gone, no feed merges theirs any more.
    private func takeOut(_ position: LogPosition, of owner: UserID, in transaction: StoreTransaction) throws {
        let owner = Array(owner.rawValue.utf8)
        if try feeds.contains(position, for: owner, in: transaction) {
            for reader in try readers(of: owner, in: transaction) {
                try feeds.remove([position], for: reader, in: transaction)
            }
        } else if try transaction.value(for: mergeKey(owner, owner), in: merges) != nil,
            try !heldBack.holdsAny(of: owner, in: transaction)
        {
            for reader in try readers(of: owner, in: transaction) {
                try transaction.delete(mergeKey(reader, owner), in: merges)
            }
        }
    }

    private func mergeKey(_ reader: [UInt8], _ author: [UInt8]) -> [UInt8] { reader + [0] + author }

    /// `author` and the ids of their followers: the feeds that show the author's posts.
    private func readers(of author: [UInt8], in transaction: StoreTransaction) throws -> [[UInt8]] {
        // followers: followee, position, follower — the follower id is what follows the position.
        var readers: [[UInt8]] = [author]
        let prefix = author + [0]
        try transaction.scan(followers, prefix: prefix) { key, _ in
            readers.append(Array(key[(prefix.count + 9)...]))
            return true
        }
        return readers
    }

    /// The positions of `author`'s posts and reposts that were fanned out, oldest first (``FeedFanOut``).
    private func fannedOutPositions(of author: [UInt8], in transaction: StoreTransaction) throws -> [UInt64] {
        let prefix = author + [0]
        var positions: [UInt64] = []
        try transaction.scan(fannedOut, prefix: prefix) { key, _ in
            positions.append(ProjectionKey.position(in: key, at: prefix.count).rawValue)
            return true
        }
        return positions
    }

    /// The authors with any held-back post.
    private func authorsHoldingBack(in transaction: StoreTransaction) throws -> Set<[UInt8]> {
        var authors: Set<[UInt8]> = []
        try transaction.scan(heldBack.table) { key, _ in
            authors.insert(Array(key[..<(key.count - 9)]))
            return true
        }
        return authors
    }

    /// The authors whose held-back posts `reader`'s feed merges.
    func mergedAuthors(of reader: [UInt8], in transaction: StoreTransaction) throws -> [[UInt8]] {
        let prefix = reader + [0]
        var authors: [[UInt8]] = []
        try transaction.scan(merges, prefix: prefix) { key, _ in
            authors.append(Array(key[prefix.count...]))
            return true
        }
        return authors
    }
}

extension ReadView {
    /// Posts and plain reposts of the users `user` follows, and `user`'s own, newest first; a post once, at its newest
    /// repost among them.
    public func followingFeed(of user: UserID, kind: PostKind = .all, page: PageRequest) throws -> Page<Post> {
        try Page(copying: { try followingFeed(of: user, kind: kind, page: page, $0) })
    }

    /// Lends `each` the posts of `kind` of `user`'s Following feed, newest first, read in place.
    public func followingFeed(
        of user: UserID, kind: PostKind = .all, page: PageRequest, _ each: (borrowing StoredPost) throws -> Void
    ) throws -> PageEnd {
        let feeds = models.followingFeeds
        let reader = Array(user.rawValue.utf8)
        func item(_ position: LogPosition) throws -> Bool {
            guard let id = try postID(at: position) else {
                throw ProjectionError.inconsistent("no post at position \(position) of the feed of \(user)")
            }
            guard let post = try feedEntry(at: position, post: id, viewer: user, scope: .following(user), kind: kind)
            else { return false }
            try each(post.lent())
            return true
        }
        let merged = try feeds.mergedAuthors(of: reader, in: transaction)
        guard !merged.isEmpty else {
            return try feeds.feeds.forEachInPage(of: user, request: page, in: transaction, item)
        }
        // The materialised positions, then each merged author's held-back ones.
        return try forEachInMergedPage(lists: merged.count + 1, request: page, item) { list, before, count in
            guard list > 0 else { return try feeds.feeds.newest(count, of: reader, before: before, in: transaction) }
            return try feeds.heldBack.newest(of: merged[list - 1], below: before, count: count, in: transaction)
        }
    }
}

extension ReadView {
    /// How many authors' held-back posts `user`'s Following feed merges when read (``FeedFanOut``).
    package func mergedFeedAuthorCount(of user: UserID) throws -> Int {
        try models.followingFeeds.mergedAuthors(of: Array(user.rawValue.utf8), in: transaction).count
    }
}

extension ReadView {
    /// Lends `body` the post as `viewer`'s Following feed shows it at `position` (where it was posted or plainly
    /// reposted); nil, without calling `body`, when the feed does not show it there (gone, hidden, or shown at a newer
    /// repost).
    public func withFeedPost<R>(
        _ post: PostID, at position: LogPosition, viewer: UserID, _ body: (borrowing StoredPost) throws -> R
    ) throws -> R? {
        guard let found = try storedID(of: post),
            let shown = try feedEntry(at: position, post: found, viewer: viewer, scope: .following(viewer))
        else { return nil }
        return try body(shown.lent())
    }

    /// Whether `user`'s Following feed holds `post` (by `author`) anywhere: posted by the user or someone they follow,
    /// or plainly reposted by one of them.
    func isInFollowingFeed(_ post: PostID, author: UserID, of user: UserID) throws -> Bool {
        guard try postRecord(post) != nil else { return false }
        if try author == user || follows(user, author) { return true }
        var reposted = false
        try transaction.scan(models.posts.postReposts, prefix: ProjectionKey(post).prefix()) { _, reposter in
            reposted = try FeedScope.following(user).includes(reposter, in: self)
            return !reposted
        }
        return reposted
    }

    /// The posts of `user`'s posts tab, posted or plainly reposted, each with its author, newest first.
    func postsAndReposts(of user: UserID) throws -> [(post: PostID, author: UserID)] {
        var ids: [PostID] = []
        try transaction.scan(models.posts.userPosts, prefix: ProjectionKey(user).prefix()) { _, value in
            ids.append(PostID(unchecked: String(copying: value)))
            return true
        }
        return try ids.reversed().compactMap { post in try postRecord(post).map { (post, $0.author) } }
    }
}

/// The posts' positions of the authors read last, up to a budget of positions: when it is spent, all are forgotten
/// and the popular ones come back at once. Memory stays flat whatever the size of the log.
struct AuthorPositions {
    let budget: Int
    private var positions: [[UInt8]: [UInt64]] = [:]
    private var held = 0

    init(budget: Int) { self.budget = budget }

    mutating func positions(of author: [UInt8], reading read: () throws -> [UInt64]) rethrows -> [UInt64] {
        if let known = positions[author] { return known }
        let read = try read()
        // An author with no posts still costs an entry: its id and an empty list, about 8 positions' worth.
        let cost = read.count + 8
        guard cost <= budget else { return read }
        if held + cost > budget {
            positions.removeAll(keepingCapacity: true)
            held = 0
        }
        positions[author] = read
        held += cost
        return read
    }
}
