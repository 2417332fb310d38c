import ChorusLog

/// The read models' tables, with their layouts, in one place: the models that own them, the models that read them,
/// and the queries all look tables up by these.
enum Tables {
    static let checkpoint: StoreTableDefinition = "checkpoint"
    static let profiles: StoreTableDefinition = "profiles"
    static let profileCounters: StoreTableDefinition = "profile-counters"
    static let followEdges: StoreTableDefinition = "follow-edges"
    static let followers: StoreTableDefinition = "followers"
    static let following: StoreTableDefinition = "following"
    static let posts: StoreTableDefinition = "posts"
    static let postCounters: StoreTableDefinition = "post-counters"
    static let postLikes: StoreTableDefinition = "post-likes"
    static let userPosts: StoreTableDefinition = "user-posts"
    static let userLikes: StoreTableDefinition = "user-likes"
    static let comments: StoreTableDefinition = "comments"
    static let home: StoreTableDefinition = "home"
    /// Per user, the positions of the posts in the user's Following feed, in ``PositionChunks``.
    static let feeds: StoreTableDefinition = "feed-chunks"
    static let notifications: StoreTableDefinition = "notifications"
    static let messages: StoreTableDefinition = "messages"
    static let recent: StoreTableDefinition = "recent"
    static let recentIndex: StoreTableDefinition = "recent-index"
    static let userSearch: StoreTableDefinition = "user-search"

    /// The tables no model that follows events reads while a build replays the log (only derived models do, after
    /// it), so that a build loads them in key order (``ChorusLog/StoreTransaction/loadingInKeyOrder(_:spillingInto:_:)``).
    /// An unlike or unfollow recorded before it carried the position it takes back (schema version 1) reads
    /// `post-likes` or `follow-edges`, which merges what was loaded into them so far: slower, but only for old logs.
    static let loadedInKeyOrder = [
        notifications, userLikes, following, followers, userPosts, comments, messages, postLikes, followEdges,
    ]
    /// The tables a derived model writes out of key order (each conversation's row under both of its users), which a
    /// build loads in key order too; the others are derived in key order and appended as they come.
    static let derivedOutOfKeyOrder = [recent, recentIndex]
}
