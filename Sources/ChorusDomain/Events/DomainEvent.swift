import ChorusLog

/// Everything that can happen in Chorus, in the past tense. Each is stored as one log event; its stream is the
/// aggregate it belongs to (a user, a post, a conversation). Each event is declared in its feature's folder under
/// `Features`, with its codec and what it changes in the decision state (``StoredEvent``); this file lists them.
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
    case mediaRemoved(MediaRemoved)
    case deviceRegistered(DeviceRegistered)
    case deviceForgotten(DeviceForgotten)
    case pushSettingsChanged(PushSettingsChanged)
    case bookmarked(Bookmarked)
    case unbookmarked(Unbookmarked)
    case wordMuted(WordMuted)
    case wordUnmuted(WordUnmuted)
    case followRequested(FollowRequested)
    case followRequestEnded(FollowRequestEnded)
}

extension DomainEvent {
    /// The name the log records each kind of event under, sorted: what a filter by type offers.
    public static let typeNames: [String] = storedTypes.map { $0.typeName }.sorted()

    /// Every kind of event, as the log stores it: a new one is added here and as a case above.
    static let storedTypes: [any StoredEvent.Type] = [
        UserRegistered.self,
        ProfileEdited.self,
        PostCreated.self,
        PostEdited.self,
        PostDeleted.self,
        Liked.self,
        Unliked.self,
        Reposted.self,
        Unreposted.self,
        CommentAdded.self,
        CommentDeleted.self,
        Followed.self,
        Unfollowed.self,
        MessageSent.self,
        RoomCreated.self,
        RoomJoined.self,
        RoomLeft.self,
        RoomMessageSent.self,
        NotificationsRead.self,
        ConversationRead.self,
        SessionStarted.self,
        SessionEnded.self,
        PasswordChanged.self,
        PasswordResetRequested.self,
        PasswordResetUnmatched.self,
        Blocked.self,
        Unblocked.self,
        Muted.self,
        Unmuted.self,
        ReportFiled.self,
        ReportResolved.self,
        UserSuspended.self,
        UserUnsuspended.self,
        AccountDeleted.self,
        ErasureCompleted.self,
        MediaRemoved.self,
        DeviceRegistered.self,
        DeviceForgotten.self,
        PushSettingsChanged.self,
        Bookmarked.self,
        Unbookmarked.self,
        WordMuted.self,
        WordUnmuted.self,
        FollowRequested.self,
        FollowRequestEnded.self,
    ]

    /// The event's own type, which knows how it is stored.
    var stored: any StoredEvent {
        switch self {
        case .userRegistered(let event): event
        case .profileEdited(let event): event
        case .postCreated(let event): event
        case .postEdited(let event): event
        case .postDeleted(let event): event
        case .liked(let event): event
        case .unliked(let event): event
        case .reposted(let event): event
        case .unreposted(let event): event
        case .commentAdded(let event): event
        case .commentDeleted(let event): event
        case .followed(let event): event
        case .unfollowed(let event): event
        case .messageSent(let event): event
        case .roomCreated(let event): event
        case .roomJoined(let event): event
        case .roomLeft(let event): event
        case .roomMessageSent(let event): event
        case .notificationsRead(let event): event
        case .conversationRead(let event): event
        case .sessionStarted(let event): event
        case .sessionEnded(let event): event
        case .passwordChanged(let event): event
        case .passwordResetRequested(let event): event
        case .passwordResetUnmatched(let event): event
        case .blocked(let event): event
        case .unblocked(let event): event
        case .muted(let event): event
        case .unmuted(let event): event
        case .reportFiled(let event): event
        case .reportResolved(let event): event
        case .userSuspended(let event): event
        case .userUnsuspended(let event): event
        case .accountDeleted(let event): event
        case .erasureCompleted(let event): event
        case .mediaRemoved(let event): event
        case .deviceRegistered(let event): event
        case .deviceForgotten(let event): event
        case .pushSettingsChanged(let event): event
        case .bookmarked(let event): event
        case .unbookmarked(let event): event
        case .wordMuted(let event): event
        case .wordUnmuted(let event): event
        case .followRequested(let event): event
        case .followRequestEnded(let event): event
        }
    }

    /// The aggregate the event belongs to: `user-…`, `post-…`, `room-…`, `report-…`, or `conversation-…` (the two user
    /// ids, sorted).
    public var stream: StreamID { stored.stream }
}
