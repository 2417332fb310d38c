import ChorusDomain
import ChorusLog

/// A change on one of a caller's live topics, as the read models show it once they have applied the event that made
/// it: the events of a live stream, before they are rendered.
public enum LiveChange: Sendable, Hashable {
    /// A new post in the caller's Following feed (`feed`), posted or plainly reposted at `at`: read it in place with
    /// ``ReadView/withFeedPost(_:at:viewer:_:)``.
    case post(PostID, at: LogPosition)
    /// A post that left the caller's Following feed (`feed`): deleted, unreposted, its author unfollowed or blocked
    /// either way.
    case postRemoved(PostID)
    /// A new comment on a post (`post:{id}`).
    case comment(Comment)
    /// A comment deleted from a post (`post:{id}`).
    case commentRemoved(post: PostID, comment: CommentID)
    /// A post's like count after a like or an unlike (`post:{id}`).
    case likes(post: PostID, count: UInt64)
    /// A post's plain repost count after a repost or an unrepost (`post:{id}`).
    case reposts(post: PostID, count: UInt64)
    /// The caller's notification the event made (`notifications`).
    case notification(Notification)
    /// A new message in one of the caller's conversations (`conversation:{userId}`).
    case message(Message)
    /// The caller's conversation that moved to the top of the recent-messages list (`conversations`).
    case conversation(Conversation)
    /// A user edited their profile (`profile:{userId}`): every screen showing them can refresh from the new one, read
    /// with ``ReadView/profile(_:viewer:)``.
    case profile(UserID)
    /// The caller's partner read their conversation (`conversations`): the newest of the caller's messages they have
    /// read.
    case read(partner: UserID, upTo: MessageID?)
    /// A new message in a room the caller is in (`room:{id}`).
    case roomMessage(RoomMessage)
    /// Someone joined or left a room the caller is in, or the caller left it (`room:{id}`): read it with
    /// ``ReadView/room(_:viewer:)``.
    case room(RoomID)
}

extension ReadView {
    /// The changes `recorded` made on `viewer`'s `topics`, one per topic it concerns, in the order a stream sends them;
    /// empty when it concerns none. The view must be at `recorded`'s position or later.
    public func liveChanges(of recorded: RecordedEvent, for viewer: UserID, on topics: Set<LiveTopic>) throws
        -> [LiveChange]
    {
        try liveChanges(of: recorded, decoded: DomainEvent(decoding: recorded, keys: keys), for: viewer, on: topics)
    }

    /// ``liveChanges(of:for:on:)`` of an event decoded already (`event` is `recorded` decoded): many streams share one
    /// decoding (``DecodedEventWindow``).
    public func liveChanges(
        of recorded: RecordedEvent, decoded event: DomainEvent, for viewer: UserID, on topics: Set<LiveTopic>
    ) throws -> [LiveChange] {
        var changes: [LiveChange] = []
        func addLikes(_ post: PostID) throws {
            guard topics.contains(.post(post)), let count = try withPost(post, viewer: viewer, { $0.post.likes }) else {
                return
            }
            changes.append(.likes(post: post, count: count))
        }
        func addReposts(_ post: PostID) throws {
            guard topics.contains(.post(post)), let count = try withPost(post, viewer: viewer, { $0.post.reposts })
            else { return }
            changes.append(.reposts(post: post, count: count))
        }
        /// A post that is in no place of the caller's Following feed any more.
        func addRemoved(_ post: PostID, author: UserID) throws {
            guard try !isInFollowingFeed(post, author: author, of: viewer) else { return }
            changes.append(.postRemoved(post))
        }
        func addNotification() throws {
            guard topics.contains(.notifications), let made = try notification(of: viewer, at: recorded.position) else {
                return
            }
            changes.append(.notification(made))
        }
        switch event {
        case .postCreated(let event):
            if topics.contains(.feed), try event.author == viewer || follows(viewer, event.author),
                try postRecord(event.post) != nil
            {
                changes.append(.post(event.post, at: recorded.position))
            }
        case .reposted(let event):
            if topics.contains(.feed), try event.user == viewer || follows(viewer, event.user) {
                changes.append(.post(event.post, at: recorded.position))
            }
            try addReposts(event.post)
            try addNotification()
        case .unreposted(let event):
            if topics.contains(.feed), try event.user == viewer || follows(viewer, event.user) {
                try addRemoved(event.post, author: event.postAuthor)
            }
            try addReposts(event.post)
        case .postDeleted(let event):
            if topics.contains(.feed), try event.author == viewer || follows(viewer, event.author) {
                changes.append(.postRemoved(event.post))
            }
        case .commentDeleted(let event):
            if topics.contains(.post(event.post)), try !isHidden(event.post, from: viewer) {
                changes.append(.commentRemoved(post: event.post, comment: event.comment))
            }
        case .commentAdded(let event):
            // Neither on a post hidden from the viewer, nor by someone hidden from them (a block either way), as the
            // post's comments read over REST.
            if topics.contains(.post(event.post)), try !isHidden(event.post, from: viewer),
                try !hides(event.author, from: viewer), let author = try userSummary(event.author)
            {
                changes.append(
                    .comment(
                        Comment(
                            id: event.comment, postID: event.post, author: author, text: event.text,
                            createdAt: recorded.recordedAt)))
            }
            try addNotification()
        case .liked(let event):
            try addLikes(event.post)
            try addNotification()
        case .unliked(let event):
            try addLikes(event.post)
        case .followed:
            try addNotification()
        case .unfollowed(let event) where event.follower == viewer && topics.contains(.feed):
            // Each post and repost of the unfollowed user's that no one else keeps in the feed.
            var removed = Set<PostID>()
            for (post, author) in try postsAndReposts(of: event.followee) where removed.insert(post).inserted {
                try addRemoved(post, author: author)
            }
        case .blocked(let event)
        where (event.blocker == viewer || event.blocked == viewer) && topics.contains(.feed):
            // The other's posts that followed users' reposts keep in the feed are hidden from now on. (Those only
            // their follow kept there leave with the Unfollowed of the same command.)
            let other = event.blocker == viewer ? event.blocked : event.blocker
            var removed = Set<PostID>()
            for (post, author) in try postsAndReposts(of: other)
            where author == other && removed.insert(post).inserted {
                if try isInFollowingFeed(post, author: author, of: viewer) { changes.append(.postRemoved(post)) }
            }
        case .messageSent(let event) where event.from == viewer || event.to == viewer:
            guard let from = try userSummary(event.from), let to = try userSummary(event.to) else { break }
            let message = Message(
                id: event.message, from: from, to: to, text: event.text, createdAt: recorded.recordedAt)
            let partner = event.from == viewer ? to : from
            if topics.contains(.conversation(partner.id)) { changes.append(.message(message)) }
            if topics.contains(.conversations) {
                changes.append(.conversation(try conversation(of: viewer, with: partner, last: message)))
            }
        case .conversationRead(let event) where event.partner == viewer && topics.contains(.conversations):
            changes.append(
                .read(partner: event.reader, upTo: try partnerReadUpTo(of: viewer, with: event.reader)))
        case .roomMessageSent(let event) where topics.contains(.room(event.room)):
            // Members only, as the read models have them.
            if try isMember(viewer, of: event.room),
                let message = try roomMessage(in: event.room, at: recorded.position)
            {
                changes.append(.roomMessage(message))
            }
        case .roomJoined(let event) where topics.contains(.room(event.room)):
            if try isMember(viewer, of: event.room) { changes.append(.room(event.room)) }
        case .roomLeft(let event) where topics.contains(.room(event.room)):
            if try event.user == viewer || isMember(viewer, of: event.room) { changes.append(.room(event.room)) }
        case .profileEdited(let event) where topics.contains(.profile(event.user)):
            changes.append(.profile(event.user))
        default:
            break
        }
        return changes
    }
}
