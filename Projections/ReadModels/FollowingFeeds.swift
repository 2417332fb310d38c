import ChorusDomain
import ChorusLog

/// Each user's Following feed, materialised on write: a post goes into its author's feed and each follower's;
/// a follow back-fills the followee's posts; an unfollow takes them out. Entries are keyed by the post's own
/// position, so a back-filled post lands where it belongs in time.
///
/// - `feeds`: user, position of the post → post
///
/// Reads ``Profiles``' `followers` and ``Posts``' `user-posts`, which the events handled here do not change.
struct FollowingFeeds: ReadModel {
    static let tables = [TableName.feeds]

    let feeds: StoreTable
    let followers: StoreTable
    let userPosts: StoreTable

    init(store: KeyValueStore) {
        feeds = store.table(TableName.feeds)
        followers = store.table(TableName.followers)
        userPosts = store.table(TableName.userPosts)
    }

    func apply(_ event: DomainEvent, at envelope: EventEnvelope, in transaction: StoreTransaction) throws {
        switch event {
        case .postCreated(let event):
            let post = Array(event.post.rawValue.utf8)
            try transaction.put(post, for: feedKey(event.author, envelope.position), in: feeds)
            // followers: followee, position, follower — the follower id is what follows the position.
            let prefix = ProjectionKey(event.author).prefix()
            var readers: [UserID] = []
            try transaction.scan(followers, from: prefix) { key, _ in
                guard key.starts(with: prefix) else { return false }
                readers.append(ProjectionKey.user(afterPositionIn: key, prefixCount: prefix.count))
                return true
            }
            for reader in readers { try transaction.put(post, for: feedKey(reader, envelope.position), in: feeds) }
        case .followed(let event):
            for (position, post) in try posts(of: event.followee, in: transaction) {
                try transaction.put(post, for: feedKey(event.follower, position), in: feeds)
            }
        case .unfollowed(let event):
            for (position, _) in try posts(of: event.followee, in: transaction) {
                try transaction.delete(feedKey(event.follower, position), in: feeds)
            }
        case .userRegistered, .profileEdited, .liked, .unliked, .commentAdded, .messageSent:
            break
        }
    }

    private func feedKey(_ user: UserID, _ position: LogPosition) -> [UInt8] {
        var key = ProjectionKey(user)
        key.append(position)
        return key.bytes
    }

    /// The author's posts with their positions, from the posts tab.
    private func posts(of author: UserID, in transaction: StoreTransaction) throws -> [(LogPosition, [UInt8])] {
        let prefix = ProjectionKey(author).prefix()
        var found: [(LogPosition, [UInt8])] = []
        try transaction.scan(userPosts, from: prefix) { key, value in
            guard key.starts(with: prefix) else { return false }
            found.append((ProjectionKey.position(in: key, at: prefix.count), Array(value)))
            return true
        }
        return found
    }
}
