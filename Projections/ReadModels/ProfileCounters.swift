import ChorusDomain
import ChorusLog
import ChorusStorage

/// Each profile's followers, following and posts counts.
///
/// Derived: the counters are the number of entries of ``Profiles``' `followers` and `following` tabs, ``Posts``'
/// `user-posts` tab and ``Posts``' `user-reposts` under the user; the posts count is the tab's entries less the plain
/// reposts among them. Applied before those models, so that it sees whether a follow, an unfollow or a repost
/// changes an edge.
struct ProfileCounters: DerivedReadModel {
    /// user → followers, following, posts tab entries, plain reposts (``Counters``)
    static let counters: StoreTableDefinition = "profile-counters"
    static let tables = [counters]
    /// The order of a profile's counters.
    static let followersCounter = 0, followingCounter = 1, tabCounter = 2, repostsCounter = 3, counterCount = 4

    let counters: StoreTable
    let profiles: StoreTable
    let edges: StoreTable
    let followers: StoreTable
    let following: StoreTable
    let userPosts: StoreTable
    let userReposts: StoreTable

    init(store: KeyValueStore) {
        counters = store.table(Self.counters)
        profiles = store.table(Profiles.profiles)
        edges = store.table(Profiles.edges)
        followers = store.table(Profiles.followers)
        following = store.table(Profiles.following)
        userPosts = store.table(Posts.userPosts)
        userReposts = store.table(Posts.userReposts)
    }

    func apply(_ event: DomainEvent, at envelope: EventEnvelope, in transaction: StoreTransaction) throws {
        switch event {
        case .followed(let event):
            guard try !isFollowing(event.follower, event.followee, in: transaction) else { return }
            try count(event.follower, Self.followingCounter, by: 1, in: transaction)
            try count(event.followee, Self.followersCounter, by: 1, in: transaction)
        case .unfollowed(let event):
            guard try isFollowing(event.follower, event.followee, in: transaction) else { return }
            try count(event.follower, Self.followingCounter, by: -1, in: transaction)
            try count(event.followee, Self.followersCounter, by: -1, in: transaction)
        case .postCreated(let event):
            try count(event.author, Self.tabCounter, by: 1, in: transaction)
        case .reposted(let event):
            guard try !transaction.hasReposted(event.user, event.post, in: userReposts) else { return }
            try count(event.user, Self.tabCounter, by: 1, in: transaction)
            try count(event.user, Self.repostsCounter, by: 1, in: transaction)
        case .unreposted(let event):
            guard try transaction.hasReposted(event.user, event.post, in: userReposts) else { return }
            try count(event.user, Self.tabCounter, by: -1, in: transaction)
            try count(event.user, Self.repostsCounter, by: -1, in: transaction)
        case .postDeleted(let event):
            var tab = ProjectionKey(event.author)
            tab.append(event.postedAt)
            guard try transaction.withValue(for: tab.bytes, in: userPosts, { $0 != nil }) else { return }
            try count(event.author, Self.tabCounter, by: -1, in: transaction)
        case .userRegistered, .profileEdited, .postEdited, .commentDeleted, .liked, .unliked, .commentAdded,
            .messageSent, .roomCreated, .roomJoined, .roomLeft, .roomMessageSent, .notificationsRead, .conversationRead,
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
        try transaction.deriveCounters(
            in: counters, for: profiles, counting: [followers, following, userPosts, userReposts])
    }

    private func isFollowing(_ follower: UserID, _ followee: UserID, in transaction: StoreTransaction) throws -> Bool {
        var edge = ProjectionKey(follower)
        edge.append(followee)
        return try transaction.withValue(for: edge.bytes, in: edges) { $0 != nil }
    }

    private func count(_ user: UserID, _ counter: Int, by change: Int64, in transaction: StoreTransaction) throws {
        try transaction.addToCounter(
            counter, of: ProjectionKey(user).bytes, by: change, count: Self.counterCount, in: counters)
    }
}

extension ReadView {
    /// A profile's counts.
    func profileCounts(of user: UserID) throws -> (followers: UInt64, following: UInt64, posts: UInt64) {
        let counters = try transaction.counters(
            ProjectionKey(user).bytes, count: ProfileCounters.counterCount, in: models.profileCounters.counters)
        return (
            counters[ProfileCounters.followersCounter], counters[ProfileCounters.followingCounter],
            counters[ProfileCounters.tabCounter] - counters[ProfileCounters.repostsCounter]
        )
    }
}
