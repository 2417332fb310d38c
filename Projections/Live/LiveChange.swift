import ChorusDomain
import ChorusLog

/// A change on one of a caller's live topics, as the read models show it once they have applied the event that made
/// it: the events of a live stream, before they are rendered.
public enum LiveChange: Sendable, Hashable {
    /// A new post in the caller's Following feed (`feed`), posted or plainly reposted at `at`: read it in place with
    /// ``ReadView/withFeedPost(_:at:viewer:_:)``.
    case post(PostID, at: LogPosition)
    /// A new post holding a tag the caller listens to (`hashtag:{tag}`), not sent as a ``post(_:at:)`` of the feed
    /// already: read it in place with ``ReadView/withTaggedPost(_:viewer:_:)``.
    case taggedPost(PostID)
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
    /// decoding (``DecodedEventWindow``). What each event changes is beside the others of its feature, in `Changes`.
    public func liveChanges(
        of recorded: RecordedEvent, decoded event: DomainEvent, for viewer: UserID, on topics: Set<LiveTopic>
    ) throws -> [LiveChange] {
        var list = LiveChangeList(
            position: recorded.position, recordedAt: recorded.recordedAt, viewer: viewer, topics: topics)
        switch event {
        case .postCreated(let event): try addChanges(of: event, to: &list)
        case .postEdited(let event): try addChanges(of: event, to: &list)
        case .postDeleted(let event): try addChanges(of: event, to: &list)
        case .reposted(let event): try addChanges(of: event, to: &list)
        case .unreposted(let event): try addChanges(of: event, to: &list)
        case .liked(let event): try addChanges(of: event, to: &list)
        case .unliked(let event): try addChanges(of: event, to: &list)
        case .commentAdded(let event): try addChanges(of: event, to: &list)
        case .commentDeleted(let event): try addChanges(of: event, to: &list)
        case .followed(let event): try addChanges(of: event, to: &list)
        case .followRequested(let event): try addChanges(of: event, to: &list)
        case .unfollowed(let event): try addChanges(of: event, to: &list)
        case .blocked(let event): try addChanges(of: event, to: &list)
        case .messageSent(let event): try addChanges(of: event, to: &list)
        case .conversationRead(let event): try addChanges(of: event, to: &list)
        case .roomMessageSent(let event): try addChanges(of: event, to: &list)
        case .roomJoined(let event): try addChanges(of: event, to: &list)
        case .roomLeft(let event): try addChanges(of: event, to: &list)
        case .profileEdited(let event): addChanges(of: event, to: &list)
        default: break
        }
        return list.changes
    }
}
