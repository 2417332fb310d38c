import ChorusDelivery
import ChorusDomain
import ChorusLog
import ChorusProjections

/// Which events make which webhooks, and their bodies: `{"type", "timestamp", "data"}` as Standard Webhooks lays a
/// payload out, `data` holding the same objects the API answers with, rendered from the read models as they are when
/// the outbox takes the event in (at its position or later, as a live stream renders it).
///
/// - `notification.created`, `{recipient, notification}`: a like, a comment, a repost, a follow, a follow request or
///   its acceptance notified someone
/// - `message.created`, `{recipient, message}`: a message to the recipient
/// - `password_reset.requested`, `{userId, email, token, expiresAt}`
/// - `report.filed`, `{report}` (as `GET /v1/admin/reports` shows it), in order among reports
/// - `account.deleted`, `{userId}`: the receiver erases what it kept of the user; the user's id alone, which the
///   erasure leaves in the outbox when it takes out the user's other webhooks
///   (``DeliveryOutbox/forget(_:deletedThrough:timeout:)``)
struct WebhookEvents: WebhookContent {
    let renderer: ObjectRenderer
    let tokens: SessionTokens
    let keys: any PersonalDataKeys

    /// The webhooks `recorded` makes, in the order they are sent.
    func webhooks(of recorded: RecordedEvent, in view: borrowing ReadView) throws -> [Webhook] {
        switch try DomainEvent(decoding: recorded, keys: keys) {
        case .liked(let event): try notification(of: recorded, to: event.postAuthor, in: view)
        case .commentAdded(let event): try notification(of: recorded, to: event.postAuthor, in: view)
        case .reposted(let event): try notification(of: recorded, to: event.postAuthor, in: view)
        case .followed(let event):
            try notification(of: recorded, to: event.requestedAt == nil ? event.followee : event.follower, in: view)
        case .followRequested(let event): try notification(of: recorded, to: event.followee, in: view)
        case .messageSent(let event): try message(event, recorded, in: view)
        case .passwordResetRequested(let event): try passwordReset(event, recorded, in: view)
        case .reportFiled(let event): try report(event, recorded, in: view)
        case .accountDeleted(let event): [accountDeleted(event, recorded)]
        default: []
        }
    }

    private func notification(of recorded: RecordedEvent, to recipient: UserID?, in view: borrowing ReadView) throws
        -> [Webhook]
    {
        guard let recipient,
            case .notification(let made)? = try view.liveChanges(of: recorded, for: recipient, on: [.notifications])
                .first
        else { return [] }
        return [
            Self.webhook("notification.created", of: recorded, to: recipient.rawValue) { data in
                data.object {
                    $0.field("recipient", recipient.rawValue)
                    $0.field("notification", renderer.notification(made))
                }
            }
        ]
    }

    private func message(_ event: MessageSent, _ recorded: RecordedEvent, in view: borrowing ReadView) throws
        -> [Webhook]
    {
        guard
            case .message(let message)? = try view.liveChanges(
                of: recorded, for: event.to, on: [.conversation(event.from)]
            ).first
        else { return [] }
        return [
            Self.webhook("message.created", of: recorded, to: event.to.rawValue) { data in
                data.object {
                    $0.field("recipient", event.to.rawValue)
                    $0.field("message", renderer.message(message))
                }
            }
        ]
    }

    private func passwordReset(
        _ event: PasswordResetRequested, _ recorded: RecordedEvent, in view: borrowing ReadView
    ) throws -> [Webhook] {
        guard let email = try view.profile(event.user, viewer: event.user)?.email else { return [] }
        let token = tokens.resetToken(user: event.user, reset: event.reset)
        return [
            Self.webhook("password_reset.requested", of: recorded, to: event.user.rawValue) { data in
                data.object {
                    $0.field("userId", event.user.rawValue)
                    $0.field("email", email)
                    $0.field("token", token)
                    $0.field("expiresAt", event.expiresAt)
                }
            }
        ]
    }

    /// The admins' queue is one recipient: reports go out in the order they were filed.
    private func report(_ event: ReportFiled, _ recorded: RecordedEvent, in view: borrowing ReadView) throws
        -> [Webhook]
    {
        guard let report = try view.report(event.report) else { return [] }
        return [
            Self.webhook("report.filed", of: recorded, to: "moderation") { data in
                data.object { $0.field("report", ReportJSON(report)) }
            }
        ]
    }

    private func accountDeleted(_ event: AccountDeleted, _ recorded: RecordedEvent) -> Webhook {
        Self.webhook(Webhook.accountDeletedType, of: recorded, to: event.user.rawValue) { data in
            data.object { $0.field("userId", event.user.rawValue) }
        }
    }

    /// A webhook of `type` that `recorded` made, to `recipient`, with `data`.
    private static func webhook(
        _ type: String, of recorded: RecordedEvent, to recipient: String, _ data: (inout JSONWriter) -> Void
    ) -> Webhook {
        var json = JSONWriter()
        json.object { body in
            body.field("type", type)
            body.field("timestamp", recorded.recordedAt)
            body.field("data") { data(&$0) }
        }
        return Webhook(
            id: "msg_\(recorded.position.rawValue)_\(type)", type: type, recipient: recipient, body: json.bytes)
    }
}
