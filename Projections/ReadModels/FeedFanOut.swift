import ChorusDomain
import ChorusLog
import ChorusStorage

/// Which posts ``FollowingFeeds`` fans out on write and which it holds back, to be merged into the feeds at read
/// time: a post (or plain repost) whose author had ``limit`` followers or more when it was made is held back. An
/// account with a million followers would otherwise write a million feed entries per post in one batch, and every read
/// that waits for a later position would wait for all of them.
///
/// So is one whose author had ``postLimit`` posts and reposts or more: a follow back-fills the followee's posts that
/// were fanned out, and an unfollow takes them out, in one batch too; an account with 100,000 posts would otherwise
/// hold the read models up for as long as moving 100,000 entries takes.
///
/// The decision is made once per post, when it is made, and kept: an author who crosses the limit, either way, moves
/// nothing already written (their older posts stay where they went). A feed reads the same whichever way each post
/// went, so the limit can change between runs of a store without a rebuild.
///
/// Not derived: which posts were held back depends on the order of follows and posts, not on the tables at the end,
/// so it is kept event by event even while a build replays the log, and ``FollowingFeeds`` derives from it.
struct FeedFanOut: ReadModel {
    /// The default ``limit``. The write side sets it: one post of an author at the limit holds the read models up
    /// while its feed entries are written, and every read waiting for a later position waits behind it; this keeps
    /// that a small part of a read's latency (`stall_ms_at_limit`, `chorus bench fanout`). A lower limit costs every
    /// reader of those authors a merge on every page.
    static let defaultLimit = 2_000
    /// The default ``postLimit``.
    static let defaultPostLimit = 1_000

    /// user → their followers, and the posts and plain reposts they have made, deleted or not (``Counters``, two
    /// values): counted event by event, also while builds replay the log (``ProfileCounters`` is derived at their end).
    static let reach: StoreTableDefinition = "fan-out-reach"
    /// author, position → empty: the author's posts and plain reposts held back from their followers' feeds.
    static let heldBack: StoreTableDefinition = "held-back-posts"
    /// author, position → empty: the others, written into them. A follow back-fills these and an unfollow takes them
    /// out; kept apart so that neither reads past them through an author's held-back posts, however many.
    static let fannedOut: StoreTableDefinition = "fanned-out-posts"
    static let tables = [reach, heldBack, fannedOut]

    /// The followers an author has from which on their posts are held back.
    let limit: Int
    /// The posts and reposts an author has made (deleted ones too) from which on their next are held back.
    let postLimit: Int
    let reach: StoreTable
    let heldBack: StoreTable
    let fannedOut: StoreTable

    private static let followersCounter = 0, postsCounter = 1, counterCount = 2

    init(store: KeyValueStore) { self.init(store: store, limit: Self.defaultLimit, postLimit: Self.defaultPostLimit) }

    init(store: KeyValueStore, limit: Int, postLimit: Int) {
        self.limit = max(1, limit)
        self.postLimit = max(1, postLimit)
        reach = store.table(Self.reach)
        heldBack = store.table(Self.heldBack)
        fannedOut = store.table(Self.fannedOut)
    }

    func apply(_ event: DomainEvent, at envelope: EventEnvelope, in transaction: StoreTransaction) throws {
        switch event {
        case .followed(let event):
            // The command refuses a follow that is there already and an unfollow that is not: each event is an edge.
            try count(event.followee, Self.followersCounter, by: 1, in: transaction)
        case .unfollowed(let event):
            try count(event.followee, Self.followersCounter, by: -1, in: transaction)
        case .postCreated(let event):
            try decide(envelope.position, of: event.author, in: transaction)
        case .reposted(let event):
            try decide(envelope.position, of: event.user, in: transaction)
        case .unreposted(let event):
            try forget(key(event.user, event.repostedAt), in: transaction)
        case .postDeleted(let event):
            // Only the post's entry goes: the count is of posts made, deleted or not (a build applies deletions after
            // the rest of the log, so a count they changed would decide differently there).
            try forget(key(event.author, event.postedAt), in: transaction)
        case .userRegistered, .profileEdited, .postEdited, .liked, .unliked, .commentAdded, .commentDeleted,
            .messageSent, .roomCreated, .roomJoined, .roomLeft, .roomMessageSent, .notificationsRead, .conversationRead,
            .sessionStarted, .sessionEnded, .passwordChanged, .passwordResetRequested, .passwordResetUnmatched,
            .blocked, .unblocked, .muted,
            .unmuted, .reportFiled, .reportResolved, .userSuspended, .userUnsuspended, .accountDeleted,
            .erasureCompleted,
            .mediaRemoved, .deviceRegistered, .deviceForgotten, .pushSettingsChanged, .bookmarked, .unbookmarked,
            .wordMuted, .wordUnmuted, .followRequested, .followRequestEnded:
            break
        }
    }

    /// Holds back the post `owner` made at `position` if they have ``limit`` followers or more, or have made
    /// ``postLimit`` posts and reposts or more, else notes it as fanned out; counts it.
    private func decide(_ position: LogPosition, of owner: UserID, in transaction: StoreTransaction) throws {
        var holdsBack = false
        try transaction.updateCounters(ProjectionKey(owner).bytes, count: Self.counterCount, in: reach) { counters in
            holdsBack = counters[Self.followersCounter] >= limit || counters[Self.postsCounter] >= postLimit
            counters[Self.postsCounter] += 1
        }
        try transaction.put([], for: key(owner, position), in: holdsBack ? heldBack : fannedOut)
    }

    /// A post or repost that is gone: out of whichever list it was in.
    private func forget(_ key: [UInt8], in transaction: StoreTransaction) throws {
        try transaction.delete(key, in: heldBack)
        try transaction.delete(key, in: fannedOut)
    }

    private func count(_ user: UserID, _ counter: Int, by change: Int64, in transaction: StoreTransaction) throws {
        try transaction.addToCounter(
            counter, of: ProjectionKey(user).bytes, by: change, count: Self.counterCount, in: reach)
    }

    private func key(_ owner: UserID, _ position: LogPosition) -> [UInt8] {
        var key = ProjectionKey(owner)
        key.append(position)
        return key.bytes
    }
}

/// ``FeedFanOut``'s held-back posts, as the Following feeds read them.
struct HeldBackPosts {
    let table: StoreTable

    /// Whether `owner`'s post or repost at `position` is held back.
    func contains(_ position: LogPosition, of owner: [UInt8], in transaction: StoreTransaction) throws -> Bool {
        try transaction.withValue(for: owner + [0] + ProjectionKey.position(position), in: table) { $0 != nil }
    }

    /// Whether any post or repost of `owner`'s is held back.
    func holdsAny(of owner: [UInt8], in transaction: StoreTransaction) throws -> Bool {
        var any = false
        try transaction.scan(table, prefix: owner + [0]) { _, _ in
            any = true
            return false
        }
        return any
    }

    /// Up to `count` positions of `owner`'s held-back posts and reposts, newest first, below `before` if given.
    func newest(
        of owner: [UInt8], below before: LogPosition?, count: Int, in transaction: StoreTransaction
    ) throws -> [LogPosition] {
        let prefix = owner + [0]
        var positions: [LogPosition] = []
        guard before.map({ $0.rawValue > 1 }) ?? true else { return positions }
        let start =
            prefix
            + (before.map { ProjectionKey.position(LogPosition($0.rawValue - 1)) } ?? [UInt8](repeating: 0xFF, count: 8))
        try transaction.scan(table, within: prefix, from: start, direction: .backward) { key, _ in
            guard key.count == prefix.count + 8, key.starts(with: prefix) else { return false }
            positions.append(ProjectionKey.position(in: key, at: prefix.count))
            return positions.count < count
        }
        return positions
    }
}
