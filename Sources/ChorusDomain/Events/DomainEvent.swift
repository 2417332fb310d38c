import ChorusLog

/// Everything that can happen in Chorus, in the past tense. Each is stored as one log event; its stream is the
/// aggregate it belongs to (a user, a post, a conversation). The events themselves are declared by area: accounts and
/// sessions, posts with their likes, reposts and comments, relationships, messaging, moderation.
public enum DomainEvent: Sendable, Hashable {
    case userRegistered(UserRegistered)
    case profileEdited(ProfileEdited)
    case postCreated(PostCreated)
    case postEdited(PostEdited)
    case postDeleted(PostDeleted)
    case liked(Liked)
    case unliked(Unliked)
    case reposted(Reposted)
    case unreposted(Unreposted)
    case commentAdded(CommentAdded)
    case commentDeleted(CommentDeleted)
    case followed(Followed)
    case unfollowed(Unfollowed)
    case messageSent(MessageSent)
    case roomCreated(RoomCreated)
    case roomJoined(RoomJoined)
    case roomLeft(RoomLeft)
    case roomMessageSent(RoomMessageSent)
    case notificationsRead(NotificationsRead)
    case conversationRead(ConversationRead)
    case sessionStarted(SessionStarted)
    case sessionEnded(SessionEnded)
    case passwordChanged(PasswordChanged)
    case passwordResetRequested(PasswordResetRequested)
    case passwordResetUnmatched(PasswordResetUnmatched)
    case blocked(Blocked)
    case unblocked(Unblocked)
    case muted(Muted)
    case unmuted(Unmuted)
    case reportFiled(ReportFiled)
    case reportResolved(ReportResolved)
    case userSuspended(UserSuspended)
    case userUnsuspended(UserUnsuspended)
    case accountDeleted(AccountDeleted)
    case erasureCompleted(ErasureCompleted)
}

extension DomainEvent {
    /// The aggregate the event belongs to: `user-…`, `post-…`, `room-…`, `report-…`, or `conversation-…` (the two user
    /// ids, sorted).
    public var stream: StreamID {
        let name =
            switch self {
            case .userRegistered(let event): "user-\(event.user)"
            case .profileEdited(let event): "user-\(event.user)"
            case .followed(let event): "user-\(event.follower)"
            case .unfollowed(let event): "user-\(event.follower)"
            case .postCreated(let event): "post-\(event.post)"
            case .postEdited(let event): "post-\(event.post)"
            case .postDeleted(let event): "post-\(event.post)"
            case .liked(let event): "post-\(event.post)"
            case .unliked(let event): "post-\(event.post)"
            case .reposted(let event): "post-\(event.post)"
            case .unreposted(let event): "post-\(event.post)"
            case .commentAdded(let event): "post-\(event.post)"
            case .commentDeleted(let event): "post-\(event.post)"
            case .messageSent(let event): "conversation-\(min(event.from, event.to))-\(max(event.from, event.to))"
            case .roomCreated(let event): "room-\(event.room)"
            case .roomJoined(let event): "room-\(event.room)"
            case .roomLeft(let event): "room-\(event.room)"
            case .roomMessageSent(let event): "room-\(event.room)"
            case .notificationsRead(let event): "user-\(event.user)"
            case .conversationRead(let event):
                "conversation-\(min(event.reader, event.partner))-\(max(event.reader, event.partner))"
            case .sessionStarted(let event): "user-\(event.user)"
            case .sessionEnded(let event): "user-\(event.user)"
            case .passwordChanged(let event): "user-\(event.user)"
            case .passwordResetRequested(let event): "user-\(event.user)"
            case .passwordResetUnmatched: "password-resets"
            case .blocked(let event): "user-\(event.blocker)"
            case .unblocked(let event): "user-\(event.blocker)"
            case .muted(let event): "user-\(event.muter)"
            case .unmuted(let event): "user-\(event.muter)"
            case .reportFiled(let event): "report-\(event.report)"
            case .reportResolved(let event): "report-\(event.report)"
            case .userSuspended(let event): "user-\(event.user)"
            case .userUnsuspended(let event): "user-\(event.user)"
            case .accountDeleted(let event): "user-\(event.user)"
            case .erasureCompleted(let event): "user-\(event.user)"
            }
        // Ids are 26 characters of base32: every name here is a valid stream id.
        return StreamID(stringLiteral: name)
    }
}
