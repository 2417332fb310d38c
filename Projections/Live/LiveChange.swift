import ChorusDomain
import ChorusLog

/// A change on one of a caller's live topics, as the read models show it once they have applied the event that made
/// it: the events of a live stream, before they are rendered.
public enum LiveChange: Sendable, Hashable {
    /// A new post in the caller's Following feed (`feed`): read it in place with ``ReadView/withPost(_:viewer:_:)``.
    case post(PostID)
    /// A post that left the caller's Following feed (`feed`): it was deleted.
    case postRemoved(PostID)
    /// A new comment on a post (`post:{id}`).
    case comment(Comment)
    /// A comment deleted from a post (`post:{id}`).
    case commentRemoved(post: PostID, comment: CommentID)
    /// A post's like count after a like or an unlike (`post:{id}`).
    case likes(post: PostID, count: UInt64)
    /// The caller's notification the event made (`notifications`).
    case notification(Notification)
    /// A new message in one of the caller's conversations (`conversation:{userId}`).
    case message(Message)
    /// The caller's conversation that moved to the top of the recent-messages list (`conversations`).
    case conversation(Conversation)
    /// A user edited their profile (`profile:{userId}`): every screen showing them can refresh from the new one, read
    /// with ``ReadView/profile(_:viewer:)``.
    case profile(UserID)
}

extension ReadView {
    /// The changes `recorded` made on `viewer`'s `topics`, one per topic it concerns, in the order a stream sends them;
    /// empty when it concerns none. The view must be at `recorded`'s position or later.
    public func liveChanges(of recorded: RecordedEvent, for viewer: UserID, on topics: Set<LiveTopic>) throws
        -> [LiveChange]
    {
        var changes: [LiveChange] = []
        func addLikes(_ post: PostID) throws {
            guard topics.contains(.post(post)), let count = try withPost(post, viewer: viewer, { $0.post.likes }) else {
                return
            }
            changes.append(.likes(post: post, count: count))
        }
        func addNotification() throws {
            guard topics.contains(.notifications), let made = try notification(of: viewer, at: recorded.position) else {
                return
            }
            changes.append(.notification(made))
        }
        switch try DomainEvent(decoding: recorded, keys: keys) {
        case .postCreated(let event):
            if topics.contains(.feed), try event.author == viewer || follows(viewer, event.author),
                try postRecord(event.post) != nil
            {
                changes.append(.post(event.post))
            }
        case .postDeleted(let event):
            if topics.contains(.feed), try event.author == viewer || follows(viewer, event.author) {
                changes.append(.postRemoved(event.post))
            }
        case .commentDeleted(let event):
            if topics.contains(.post(event.post)) {
                changes.append(.commentRemoved(post: event.post, comment: event.comment))
            }
        case .commentAdded(let event):
            if topics.contains(.post(event.post)), let author = try userSummary(event.author) {
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
        case .messageSent(let event) where event.from == viewer || event.to == viewer:
            guard let from = try userSummary(event.from), let to = try userSummary(event.to) else { break }
            let message = Message(
                id: event.message, from: from, to: to, text: event.text, createdAt: recorded.recordedAt)
            let partner = event.from == viewer ? to : from
            if topics.contains(.conversation(partner.id)) { changes.append(.message(message)) }
            if topics.contains(.conversations) {
                changes.append(.conversation(Conversation(partner: partner, lastMessage: message)))
            }
        case .profileEdited(let event) where topics.contains(.profile(event.user)):
            changes.append(.profile(event.user))
        default:
            break
        }
        return changes
    }
}
