import ChorusDomain
import ChorusLog

/// Each user's Following feed, materialised on write: a post goes into its author's feed and each follower's;
/// a follow back-fills the followee's posts; an unfollow takes them out. A feed is the sorted set of its posts'
/// positions (8 bytes each, with no per-entry overhead), so a back-filled post lands where it belongs in time;
/// ``HomeTimeline`` maps a position to its post.
///
/// - `feeds`: user → { position of a post }
///
/// Reads ``Profiles``' `followers` and ``Posts``' `user-posts`, which the events handled here do not change.
struct FollowingFeeds: ReadModel {
    static let tables = [Tables.feeds]

    let feeds: StoreTable
    let followers: StoreTable
    let userPosts: StoreTable

    init(store: KeyValueStore) {
        feeds = store.table(Tables.feeds)
        followers = store.table(Tables.followers)
        userPosts = store.table(Tables.userPosts)
    }

    func apply(_ event: DomainEvent, at envelope: EventEnvelope, in transaction: StoreTransaction) throws {
        switch event {
        case .postCreated(let event):
            // A popular author has thousands of followers: their ids are gathered into one buffer, not one
            // allocation each.
            var readers = Array(event.author.rawValue.utf8)
            var ends = [readers.count]
            // followers: followee, position, follower — the follower id is what follows the position.
            let prefix = ProjectionKey(event.author).prefix()
            try transaction.scan(followers, from: prefix) { key, _ in
                guard key.starts(with: prefix) else { return false }
                readers.append(contentsOf: key[(prefix.count + 9)...])
                ends.append(readers.count)
                return true
            }
            // The newest position of the log is the newest of every feed: each insertion is an append.
            try withUnsafeBytes(of: envelope.position.rawValue.bigEndian) { position in
                try readers.withUnsafeBytes { readers in
                    var start = 0
                    for end in ends {
                        let reader = UnsafeRawBufferPointer(rebasing: readers[start..<end])
                        guard try transaction.insert(position, intoSet: reader, in: feeds, append: true) else {
                            throw ProjectionError.inconsistent("a feed holds a position past \(envelope.position)")
                        }
                        start = end
                    }
                }
            }
        case .followed(let event):
            var follower = event.follower.rawValue
            try follower.withUTF8 { follower in
                try forEachPost(of: event.followee, in: transaction) { position in
                    try transaction.insert(position, intoSet: UnsafeRawBufferPointer(follower), in: feeds)
                }
            }
        case .unfollowed(let event):
            var follower = event.follower.rawValue
            try follower.withUTF8 { follower in
                try forEachPost(of: event.followee, in: transaction) { position in
                    try transaction.remove(position, fromSet: UnsafeRawBufferPointer(follower), in: feeds)
                }
            }
        case .userRegistered, .profileEdited, .liked, .unliked, .commentAdded, .messageSent, .sessionStarted,
            .sessionEnded:
            break
        }
    }

    /// Calls `body` with the position of each of the author's posts (8 bytes, big-endian), from the posts tab.
    private func forEachPost(
        of author: UserID, in transaction: StoreTransaction, _ body: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        let prefix = ProjectionKey(author).prefix()
        var positions: [UInt8] = []
        try transaction.scan(userPosts, from: prefix) { key, _ in
            guard key.starts(with: prefix) else { return false }
            positions.append(contentsOf: key[prefix.count..<(prefix.count + 8)])
            return true
        }
        try positions.withUnsafeBytes { positions in
            for start in stride(from: 0, to: positions.count, by: 8) {
                try body(UnsafeRawBufferPointer(rebasing: positions[start..<(start + 8)]))
            }
        }
    }
}
