import ChorusDomain
import ChorusLog

extension ReadView {
    func addChanges(of event: Followed, to list: inout LiveChangeList) throws {
        try addNotification(to: &list)
    }

    func addChanges(of event: FollowRequested, to list: inout LiveChangeList) throws {
        try addNotification(to: &list)
    }

    /// Each post and repost of the unfollowed user's that no one else keeps in the viewer's feed.
    func addChanges(of event: Unfollowed, to list: inout LiveChangeList) throws {
        guard event.follower == list.viewer, list.topics.contains(.feed) else { return }
        var removed = Set<PostID>()
        for (post, author) in try postsAndReposts(of: event.followee) where removed.insert(post).inserted {
            try addRemoved(post, author: author, to: &list)
        }
    }

    /// The other's posts that followed users' reposts keep in the viewer's feed are hidden from now on. (Those only
    /// their follow kept there leave with the Unfollowed of the same command.)
    func addChanges(of event: Blocked, to list: inout LiveChangeList) throws {
        let viewer = list.viewer
        guard event.blocker == viewer || event.blocked == viewer, list.topics.contains(.feed) else { return }
        let other = event.blocker == viewer ? event.blocked : event.blocker
        var removed = Set<PostID>()
        for (post, author) in try postsAndReposts(of: other) where author == other && removed.insert(post).inserted {
            if try isInFollowingFeed(post, author: author, of: viewer) { list.changes.append(.postRemoved(post)) }
        }
    }

    func addChanges(of event: ProfileEdited, to list: inout LiveChangeList) {
        guard list.topics.contains(.profile(event.user)) else { return }
        list.changes.append(.profile(event.user))
    }
}
