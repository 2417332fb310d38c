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
///
/// Derived: whatever the order of follows, unfollows and posts, a feed holds exactly the posts of the user and of
/// everyone the user follows, so a build from an empty store joins `following` with `user-posts` once at the end
/// instead of fanning out every post (6 feed entries per event of the demo log, most of a replay's work).
struct FollowingFeeds: DerivedReadModel {
    static let tables = [Tables.feeds]

    let feeds: StoreTable
    let profiles: StoreTable
    let followers: StoreTable
    let following: StoreTable
    let userPosts: StoreTable

    init(store: KeyValueStore) {
        feeds = store.table(Tables.feeds)
        profiles = store.table(Tables.profiles)
        followers = store.table(Tables.followers)
        following = store.table(Tables.following)
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
            try transaction.scan(followers, prefix: prefix) { key, _ in
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

    func derive(in transaction: StoreTransaction) throws {
        var authors: [[UInt8]] = []
        var positions: [UInt64] = []
        // Users in key order, so that each feed is appended to the table.
        try transaction.scan(profiles) { user, _ in
            // following: follower, position, followee — the followee's id is what follows the position.
            let prefix = Array(user) + [0]
            authors = [Array(user)]
            try transaction.scan(following, prefix: prefix) { key, _ in
                authors.append(Array(key[(prefix.count + 9)...]))
                return true
            }
            positions.removeAll(keepingCapacity: true)
            for author in authors { try appendPositions(of: author, to: &positions, in: transaction) }
            guard !positions.isEmpty else { return true }
            positions.sort()
            for index in positions.indices { positions[index] = positions[index].bigEndian }
            try positions.withUnsafeBytes { elements in
                try transaction.insertSet(elements, elementSize: 8, at: user, in: feeds, append: true)
            }
            return true
        }
    }

    /// Appends the positions of `author`'s posts, from the posts tab.
    private func appendPositions(of author: [UInt8], to positions: inout [UInt64], in transaction: StoreTransaction)
        throws
    {
        let prefix = author + [0]
        try transaction.scan(userPosts, prefix: prefix) { key, _ in
            positions.append(ProjectionKey.position(in: key, at: prefix.count).rawValue)
            return true
        }
    }

    /// Calls `body` with the position of each of the author's posts (8 bytes, big-endian), from the posts tab.
    private func forEachPost(
        of author: UserID, in transaction: StoreTransaction, _ body: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        let prefix = ProjectionKey(author).prefix()
        var positions: [UInt8] = []
        try transaction.scan(userPosts, prefix: prefix) { key, _ in
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
