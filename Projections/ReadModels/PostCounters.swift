import ChorusDomain
import ChorusLog
import ChorusStorage

/// Each post's like, comment and plain repost counts.
///
/// Derived: the counts are the number of entries of ``Posts``' `post-likes`, ``Comments``' `comments` and ``Posts``'
/// `post-reposts` under the post. Applied before those models, so that it sees whether a like, an unlike, a repost or
/// a deletion changes anything.
struct PostCounters: DerivedReadModel {
    /// post → likes, comments, reposts (``Counters``)
    static let counters: StoreTableDefinition = "post-counters"
    static let tables = [counters]
    /// The order of a post's counters.
    static let likesCounter = 0, commentsCounter = 1, repostsCounter = 2, counterCount = 3

    let counters: StoreTable
    let posts: StoreTable
    let likes: StoreTable
    let comments: StoreTable
    let postReposts: StoreTable
    let userReposts: StoreTable

    init(store: KeyValueStore) {
        counters = store.table(Self.counters)
        posts = store.table(Posts.posts)
        likes = store.table(Posts.postLikes)
        comments = store.table(Comments.comments)
        postReposts = store.table(Posts.postReposts)
        userReposts = store.table(Posts.userReposts)
    }

    func apply(_ event: DomainEvent, at envelope: EventEnvelope, in transaction: StoreTransaction) throws {
        switch event {
        case .liked(let event):
            guard try !hasLiked(event.user, event.post, in: transaction) else { return }
            try count(event.post, Self.likesCounter, by: 1, in: transaction)
        case .unliked(let event):
            guard try hasLiked(event.user, event.post, in: transaction) else { return }
            try count(event.post, Self.likesCounter, by: -1, in: transaction)
        case .reposted(let event):
            guard try !transaction.hasReposted(event.user, event.post, in: userReposts) else { return }
            try count(event.post, Self.repostsCounter, by: 1, in: transaction)
        case .unreposted(let event):
            guard try transaction.hasReposted(event.user, event.post, in: userReposts) else { return }
            try count(event.post, Self.repostsCounter, by: -1, in: transaction)
        case .commentAdded(let event):
            try count(event.post, Self.commentsCounter, by: 1, in: transaction)
        case .commentDeleted(let event):
            var comment = ProjectionKey(event.post)
            comment.append(event.commentedAt)
            guard try transaction.withValue(for: comment.bytes, in: comments, { $0 != nil }) else { return }
            try count(event.post, Self.commentsCounter, by: -1, in: transaction)
        case .postDeleted(let event):
            // Its likes and comments go with it.
            try transaction.delete(ProjectionKey(event.post).bytes, in: counters)
        case .userRegistered, .profileEdited, .postCreated, .postEdited, .followed, .unfollowed, .messageSent,
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

    func derive(in transaction: StoreTransaction) throws {
        // In the order of the counters.
        try transaction.deriveCounters(in: counters, for: posts, counting: [likes, comments, postReposts])
    }

    private func hasLiked(_ user: UserID, _ post: PostID, in transaction: StoreTransaction) throws -> Bool {
        var like = ProjectionKey(post)
        like.append(user)
        return try transaction.withValue(for: like.bytes, in: likes) { $0 != nil }
    }

    private func count(_ post: PostID, _ counter: Int, by change: Int64, in transaction: StoreTransaction) throws {
        try transaction.addToCounter(
            counter, of: ProjectionKey(post).bytes, by: change, count: Self.counterCount, in: counters)
    }
}

extension ReadView {
    /// A post's counts, read in place: a feed page reads them for every post. `post` is the post's id.
    func postCountsInPlace(of post: UnsafeRawBufferPointer) throws -> (
        likes: UInt64, comments: UInt64, reposts: UInt64
    ) {
        let counters = try transaction.countersInPlace(post, in: models.postCounters.counters)
        return (
            counters[PostCounters.likesCounter], counters[PostCounters.commentsCounter],
            counters[PostCounters.repostsCounter]
        )
    }
}
