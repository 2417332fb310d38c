import ChorusDomain
import ChorusLog
import ChorusProjections

/// Which events push what to whom, read from the read models as they are when the push outbox takes the event in:
///
/// - a like, a comment, a repost, a follow, a follow request or its acceptance, or a mention that notified someone: to each of their devices, unless they turned the
///   kind `off`, or `followed` and do not follow the actor; the notification the recipient sees (none for a blocked
///   or muted actor, nor for one's own acts);
/// - a direct message: to each of the recipient's devices, likewise (kind `messages`);
/// - the user read their notifications or a conversation: a silent push with the new badge to each of their devices.
///
/// The badge is the recipient's unread notifications and conversations as of the event.
package struct PushEvents: Sendable {
    let keys: any PersonalDataKeys

    package init(keys: any PersonalDataKeys) { self.keys = keys }

    /// The pushes `recorded` makes, in the order they are sent.
    package func pushes(of recorded: RecordedEvent, in view: borrowing ReadView) throws -> [Push] {
        switch try DomainEvent(decoding: recorded, keys: keys) {
        case .liked(let event): try notification(of: recorded, to: event.postAuthor, kind: .likes, in: view)
        case .commentAdded(let event):
            // The post's author, mentioned or not, has the comment's own notification: one push.
            try notification(of: recorded, to: event.postAuthor, kind: .comments, in: view)
                + mentions(of: recorded, event.mentions.filter { $0 != event.postAuthor }, in: view)
        case .postCreated(let event): try mentions(of: recorded, event.mentions.all, in: view)
        case .postEdited(let event):
            try mentions(
                of: recorded, PostMentions(caption: event.captionMentions ?? [], text: event.textMentions ?? []).all,
                in: view)
        case .reposted(let event): try notification(of: recorded, to: event.postAuthor, kind: .reposts, in: view)
        case .followed(let event):
            // An accepted request notifies the follower.
            try notification(
                of: recorded, to: event.requestedAt == nil ? event.followee : event.follower, kind: .follows, in: view)
        case .followRequested(let event):
            try notification(of: recorded, to: event.followee, kind: .follows, in: view)
        case .messageSent(let event): try message(event, recorded, in: view)
        case .notificationsRead(let event): try badge(of: event.user, recorded, in: view)
        case .conversationRead(let event): try badge(of: event.reader, recorded, in: view)
        default: []
        }
    }

    private func notification(
        of recorded: RecordedEvent, to recipient: UserID?, kind: PushKind, in view: borrowing ReadView
    ) throws -> [Push] {
        guard let recipient,
            case .notification(let made)? = try view.liveChanges(of: recorded, for: recipient, on: [.notifications])
                .first,
            try wants(kind, from: made.actor.id, recipient: recipient, in: view)
        else { return [] }
        let payload = PushPayload(
            kind: Self.payloadKind(made.kind), actorName: made.actor.name, notificationID: made.id,
            postID: made.post?.id.rawValue, userID: made.actor.id.rawValue, position: recorded.position.rawValue,
            badge: try badge(of: recipient, in: view))
        return try pushes(payload, to: recipient, recorded, in: view)
    }

    /// To each user `recorded` mentions that it notified: an edit notifies only those it mentions first.
    private func mentions(of recorded: RecordedEvent, _ users: [UserID], in view: borrowing ReadView) throws -> [Push] {
        try users.flatMap { user in try notification(of: recorded, to: user, kind: .mentions, in: view) }
    }

    private func message(_ event: MessageSent, _ recorded: RecordedEvent, in view: borrowing ReadView) throws -> [Push]
    {
        guard
            case .message(let message)? = try view.liveChanges(
                of: recorded, for: event.to, on: [.conversation(event.from)]
            ).first,
            try wants(.messages, from: event.from, recipient: event.to, in: view)
        else { return [] }
        let payload = PushPayload(
            kind: .message, actorName: message.from.name, messageText: message.text, messageID: message.id.rawValue,
            userID: event.from.rawValue, position: recorded.position.rawValue, badge: try badge(of: event.to, in: view))
        return try pushes(payload, to: event.to, recorded, in: view)
    }

    private func badge(of user: UserID, _ recorded: RecordedEvent, in view: borrowing ReadView) throws -> [Push] {
        let payload = PushPayload(
            kind: .badge, actorName: "", position: recorded.position.rawValue, badge: try badge(of: user, in: view))
        return try pushes(payload, to: user, recorded, in: view)
    }

    /// Whether `recipient` gets pushes of `kind` for what `actor` did: never their own, nor a blocked or muted user's;
    /// then as their settings say.
    private func wants(_ kind: PushKind, from actor: UserID, recipient: UserID, in view: borrowing ReadView) throws
        -> Bool
    {
        guard actor != recipient, try !view.hides(actor, from: recipient, muting: true) else { return false }
        switch try view.pushSettings(of: recipient)[kind] ?? .all {
        case .all: return true
        case .followed: return try view.follows(recipient, actor)
        case .off: return false
        }
    }

    private func badge(of user: UserID, in view: borrowing ReadView) throws -> Int {
        Int(try view.unreadNotifications(of: user) + view.unreadConversations(of: user))
    }

    /// `payload` to each of `user`'s devices.
    private func pushes(_ payload: PushPayload, to user: UserID, _ recorded: RecordedEvent, in view: borrowing ReadView)
        throws -> [Push]
    {
        try view.allDevices(of: user).map { device in
            Push(
                id: Push.id(position: recorded.position, device: device.id), user: user, device: device.id,
                platform: device.platform, environment: device.environment,
                token: device.token, registeredAt: device.lastSeenAt.millisecondsSince1970,
                expiresAt: recorded.recordedAt.millisecondsSince1970 + Push.lifetime,
                payload: payload)
        }
    }

    private static func payloadKind(_ kind: Notification.Kind) -> PushPayload.Kind {
        switch kind {
        case .like: .like
        case .comment: .comment
        case .repost: .repost
        case .follow: .follow
        case .mention: .mention
        case .followRequest: .followRequest
        case .followAccepted: .followAccepted
        }
    }
}
