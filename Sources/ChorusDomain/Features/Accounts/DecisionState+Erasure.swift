import ChorusLog

/// Account deletion: what it takes out, and the erasures the state keeps.
///
/// `erasures`: user → the position of their ``AccountDeleted``; `completed-erasures`: user → the position of their
/// ``ErasureCompleted`` (each u64 big-endian).
extension DecisionState {
    /// Forgets the idempotent requests made in the name of `user`'s e-mail (a registration, login or reset request
    /// sent with a key): they are kept under the e-mail's key, which must not outlive the account. Called in the
    /// deletion's transaction, before its ``AccountDeleted`` takes the e-mail out of `emails`.
    func forgetRequests(byEmailOf user: UserID, in state: some StateWriter) throws {
        let id = Array(user.rawValue.utf8)
        var emailKeys: [[UInt8]] = []
        try state.forEach(in: emails) { key, value in
            if value.elementsEqual(id) { emailKeys.append(Array(key)) }
            return true
        }
        for emailKey in emailKeys {
            var requests: [[UInt8]] = []
            try state.forEach(in: idempotency, prefix: emailKey + [0]) { key, _ in
                requests.append(Array(key))
                return true
            }
            for request in requests { try state.delete(request, in: idempotency) }
        }
    }

    /// What deleting `user`'s account appends, each event to its own stream: their follows and follow requests either
    /// way, their posts
    /// (with the plain reposts that go with them), their comments on others' posts, their likes and plain reposts of
    /// others' posts, their bookmarks and muted words, their room memberships, their devices, their sessions, and last the
    /// ``AccountDeleted``. Reads the posts, comments, follows, shares and room members tables whole: an account is
    /// deleted rarely, and an index per user would cost every post, comment and follow.
    func erasure(of user: UserID, in state: some StateReader) throws -> [DomainEvent] {
        // The follows first: each follower's feed then loses all of the account's posts in one pass, and the posts'
        // deletions after find no follower's feed to visit (a post in thousands of feeds costs each a visit).
        var events = try follows(endedBy: user, in: state)
        let prefix = Self.key(user.rawValue) + [0]
        var deletedPosts = Set<String>()
        var ownPosts: [(PostID, PostState)] = []
        try state.forEach(in: posts) { key, value in
            let found = try PostState(decoding: value)
            if found.author == user, !found.deleted {
                ownPosts.append((PostID(unchecked: String(decoding: key, as: UTF8.self)), found))
            }
            return true
        }
        for (post, found) in ownPosts where !deletedPosts.contains(post.rawValue) {
            for event in try deletions(of: post, found, in: state) {
                // A plain repost post of one of theirs is one of theirs too: deleted once.
                if case .postDeleted(let deleted) = event, !deletedPosts.insert(deleted.post.rawValue).inserted {
                    continue
                }
                events.append(event)
            }
        }
        /// The author of `post` if it stands after the deletions above.
        func standingAuthor(_ post: PostID) throws -> UserID? {
            deletedPosts.contains(post.rawValue) ? nil : try author(of: post, in: state)
        }
        var ownComments: [(CommentID, CommentState)] = []
        try state.forEach(in: comments) { key, value in
            let found = try CommentState(decoding: value)
            if found.author == user, !found.deleted {
                ownComments.append((CommentID(unchecked: String(decoding: key, as: UTF8.self)), found))
            }
            return true
        }
        for (comment, found) in ownComments {
            guard let postAuthor = try standingAuthor(found.post) else { continue }
            events.append(
                .commentDeleted(
                    CommentDeleted(
                        comment: comment, post: found.post, author: user, postAuthor: postAuthor,
                        commentedAt: found.commentedAt)))
        }
        var liked: [(PostID, Edge)] = []
        try state.forEach(in: likes, prefix: prefix) { key, value in
            liked.append((PostID(unchecked: String(decoding: key[prefix.count...], as: UTF8.self)), Edge(value)))
            return true
        }
        for (post, like) in liked {
            guard let postAuthor = try standingAuthor(post) else { continue }
            events.append(.unliked(Unliked(user: user, post: post, postAuthor: postAuthor, likedAt: like.since)))
        }
        events += try unbookmarks(of: user, in: state)
        events += try unmutes(of: user, in: state)
        // Their plain reposts of others' posts, and the rooms they are in.
        for (post, share) in try entries(endingWith: user, in: shares, state: state) {
            let post = PostID(unchecked: post)
            guard let since = share.since, let postAuthor = try standingAuthor(post) else { continue }
            events.append(.unreposted(Unreposted(user: user, post: post, postAuthor: postAuthor, repostedAt: since)))
        }
        for (room, membership) in try entries(endingWith: user, in: roomMembers, state: state) {
            guard let since = membership.since else { continue }
            events.append(.roomLeft(RoomLeft(room: RoomID(unchecked: room), user: user, joinedAt: since)))
        }
        events += try signOuts(of: user, in: state)
        events.append(.accountDeleted(AccountDeleted(user: user)))
        return events
    }

    /// The follows of a deleted account, either way, ended; the requests to follow it declined, and its own withdrawn.
    private func follows(endedBy user: UserID, in state: some StateReader) throws -> [DomainEvent] {
        var events: [DomainEvent] = []
        let prefix = Self.key(user.rawValue) + [0]
        try state.forEach(in: follows, prefix: prefix) { key, value in
            let followee = UserID(unchecked: String(decoding: key[prefix.count...], as: UTF8.self))
            events.append(.unfollowed(Unfollowed(follower: user, followee: followee, followedAt: Edge(value).since)))
            return true
        }
        for (follower, follow) in try entries(endingWith: user, in: follows, state: state) {
            events.append(
                .unfollowed(
                    Unfollowed(follower: UserID(unchecked: follower), followee: user, followedAt: follow.since)))
        }
        // The requests to follow them are declined; theirs to follow others withdrawn.
        for (follower, since) in try followRequests(to: user, in: state) {
            events.append(
                .followRequestEnded(
                    FollowRequestEnded(follower: follower, followee: user, requestedAt: since, reason: .declined)))
        }
        for (followee, request) in try entries(endingWith: user, in: followRequests, state: state) {
            guard let since = request.since else { continue }
            events.append(
                .followRequestEnded(
                    FollowRequestEnded(
                        follower: user, followee: UserID(unchecked: followee), requestedAt: since, reason: .withdrawn)))
        }
        return events
    }

    /// What ends a deleted account's ways in: its devices forgotten, its sessions ended.
    private func signOuts(of user: UserID, in state: some StateReader) throws -> [DomainEvent] {
        try devices(of: user, in: state).map { device, tokenKey in
            .deviceForgotten(DeviceForgotten(user: user, device: device, tokenKey: tokenKey, reason: .accountDeleted))
        } + sessions(of: user, in: state).map { .sessionEnded(SessionEnded(session: $0, user: user)) }
    }

    /// The entries of `table` (keyed by something, NUL, a user) whose user is `user`: that something, and the entry's
    /// edge. The whole table is read.
    private func entries(endingWith user: UserID, in table: StateTable, state: some StateReader) throws -> [(
        String, Edge
    )] {
        let suffix = [0] + Array(user.rawValue.utf8)
        var found: [(String, Edge)] = []
        try state.forEach(in: table) { key, value in
            guard key.count > suffix.count, key.suffix(suffix.count).elementsEqual(suffix) else { return true }
            found.append((String(decoding: key.prefix(key.count - suffix.count), as: UTF8.self), Edge(value)))
            return true
        }
        return found
    }

    /// An erasure as the state keeps it: when it was asked for, and when it completed (nil while pending).
    public struct Erasure: Sendable, Equatable {
        public let user: UserID
        public let requestedAt: LogPosition
        public let completedAt: LogPosition?
    }

    func erasure(of user: UserID, in state: some StateReader) throws -> Erasure? {
        guard let requested = try state.withValue(for: Self.key(user.rawValue), in: erasures, Edge.init).since else {
            return nil
        }
        let completed = try state.withValue(for: Self.key(user.rawValue), in: completedErasures, Edge.init).since
        return Erasure(user: user, requestedAt: requested, completedAt: completed)
    }

    /// Every erasure, in user id order.
    func erasures(in state: some StateReader) throws -> [Erasure] {
        var users: [UserID] = []
        try state.forEach(in: erasures) { key, _ in
            users.append(UserID(unchecked: String(decoding: key, as: UTF8.self)))
            return true
        }
        return try users.compactMap { try erasure(of: $0, in: state) }
    }
}
