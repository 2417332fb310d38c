import ChorusDomain

/// What an event may concern, in the terms a live stream's interest is kept in (``LiveInterest/listens(to:)``): how
/// the live hub finds the streams an event may concern by looking them up (``LiveStreamIndex``), where asking every
/// open stream about every event cost the server in proportion to the streams open (`chorus bench day`).
public enum LiveSubject: Hashable, Sendable {
    /// Posts and reposts by this user, which may reach their own feed and their followers'.
    case postsBy(UserID)
    /// This user's Following feed as a whole: what they unfollow or block takes posts out of it.
    case feedOf(UserID)
    /// This user's notifications.
    case notificationsOf(UserID)
    /// The notifications of a post's author whom the event does not record: anyone's may change.
    case notificationsOfSomeone
    /// Direct messages from or to this user.
    case messagesOf(UserID)
    /// This user's recent-messages list.
    case conversationsOf(UserID)
    case post(PostID)
    case room(RoomID)
    case profile(UserID)
    /// New posts holding this tag (folded).
    case hashtag(String)
    /// This user's sessions: a stream whose session ends (a logout, a password change, a suspension, the account's
    /// deletion) closes.
    case sessionsOf(UserID)

    /// Calls `body` with each subject `event` may concern; with none for an event no stream is told of.
    public static func forEach(of event: DomainEvent, _ body: (LiveSubject) -> Void) {
        /// The notifications a reaction to a post may add: its author's.
        func notifications(of postAuthor: UserID?) -> LiveSubject {
            postAuthor.map { .notificationsOf($0) } ?? .notificationsOfSomeone
        }
        switch event {
        case .postCreated(let event):
            body(.postsBy(event.author))
            for tag in Hashtags.tags(in: event.caption, event.text) { body(.hashtag(tag)) }
            for user in event.mentions.all { body(.notificationsOf(user)) }
        case .postEdited(let event):
            for user in (event.captionMentions ?? []) + (event.textMentions ?? []) { body(.notificationsOf(user)) }
        case .postDeleted(let event): body(.postsBy(event.author))
        case .reposted(let event):
            body(.postsBy(event.user))
            body(.post(event.post))
            body(notifications(of: event.postAuthor))
        case .unreposted(let event):
            body(.postsBy(event.user))
            body(.post(event.post))
        case .liked(let event):
            body(.post(event.post))
            body(notifications(of: event.postAuthor))
        case .unliked(let event): body(.post(event.post))
        case .commentAdded(let event):
            body(.post(event.post))
            body(notifications(of: event.postAuthor))
            for user in event.mentions { body(.notificationsOf(user)) }
        case .commentDeleted(let event): body(.post(event.post))
        case .followed(let event):
            // An accepted request notifies the follower instead.
            body(.notificationsOf(event.requestedAt == nil ? event.followee : event.follower))
        case .followRequested(let event): body(.notificationsOf(event.followee))
        case .unfollowed(let event): body(.feedOf(event.follower))
        case .blocked(let event):
            body(.feedOf(event.blocker))
            body(.feedOf(event.blocked))
        case .messageSent(let event):
            body(.messagesOf(event.from))
            body(.messagesOf(event.to))
        case .conversationRead(let event): body(.conversationsOf(event.partner))
        case .roomMessageSent(let event): body(.room(event.room))
        case .roomJoined(let event): body(.room(event.room))
        case .roomLeft(let event): body(.room(event.room))
        case .profileEdited(let event): body(.profile(event.user))
        case .sessionEnded(let event): body(.sessionsOf(event.user))
        case .userRegistered, .roomCreated, .notificationsRead, .sessionStarted,
            .passwordChanged, .passwordResetRequested, .passwordResetUnmatched, .unblocked, .muted, .unmuted,
            .reportFiled, .reportResolved,
            .userSuspended, .userUnsuspended, .accountDeleted, .erasureCompleted,
            .mediaRemoved, .deviceRegistered, .deviceForgotten, .pushSettingsChanged, .bookmarked, .unbookmarked,
            .wordMuted, .wordUnmuted, .followRequestEnded:
            break
        }
    }
}
