/// The names of the read models' tables, in one place: the models that own them, the models that read them, and the
/// queries all look tables up by these.
enum TableName {
    static let checkpoint = "checkpoint"
    static let profiles = "profiles"
    static let profileCounters = "profile-counters"
    static let followEdges = "follow-edges"
    static let followers = "followers"
    static let following = "following"
    static let posts = "posts"
    static let postCounters = "post-counters"
    static let postLikes = "post-likes"
    static let userPosts = "user-posts"
    static let userLikes = "user-likes"
    static let comments = "comments"
    static let home = "home"
    static let feeds = "feeds"
    static let notifications = "notifications"
    static let notificationReferences = "notification-refs"
    static let messages = "messages"
    static let recent = "recent"
    static let recentIndex = "recent-index"
    static let userSearch = "user-search"
}
