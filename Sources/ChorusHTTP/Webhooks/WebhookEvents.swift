import ChorusDelivery
import ChorusDomain
import ChorusLog
import ChorusProjections

/// Which events make which webhooks, and their bodies: `{"type", "timestamp", "data"}` as Standard Webhooks lays a
/// payload out, `data` holding the same objects the API answers with, rendered from the read models as they are when
/// the outbox takes the event in (at its position or later, as a live stream renders it).
///
/// - `notification.created`, `{recipient, notification}`: a like, a comment, a repost or a follow notified someone
/// - `message.created`, `{recipient, message}`: a message to the recipient
/// - `password_reset.requested`, `{userId, email, token, expiresAt}`
/// - `report.filed`, `{report}` (as `GET /v1/admin/reports` shows it), in order among reports
struct WebhookEvents: WebhookContent {
    let renderer: ObjectRenderer
    let tokens: SessionTokens
    let keys: any PersonalDataKeys

    /// The webhooks `recorded` makes, in the order they are sent.
    func webhooks(of recorded: RecordedEvent, in view: borrowing ReadView) throws -> [WebhookOutbox.Webhook] {
        let position = recorded.position
        func webhook(_ type: String, to recipient: UserID, _ data: (inout JSONWriter) -> Void) -> WebhookOutbox.Webhook
        {
            webhook(type, toRecipient: recipient.rawValue, data)
        }
        func webhook(_ type: String, toRecipient recipient: String, _ data: (inout JSONWriter) -> Void)
            -> WebhookOutbox.Webhook
        {
            var json = JSONWriter()
            json.object { body in
                body.field("type", type)
                body.field("timestamp", recorded.recordedAt)
                body.field("data") { data(&$0) }
            }
            return WebhookOutbox.Webhook(
                id: "msg_\(position.rawValue)_\(type)", type: type, recipient: recipient, body: json.bytes)
        }
        func notification(to recipient: UserID?) throws -> [WebhookOutbox.Webhook] {
            guard let recipient,
                case .notification(let made)? = try view.liveChanges(
                    of: recorded, for: recipient, on: [.notifications]
                ).first
            else { return [] }
            return [
                webhook("notification.created", to: recipient) { data in
                    data.object {
                        $0.field("recipient", recipient.rawValue)
                        $0.field("notification", renderer.notification(made))
                    }
                }
            ]
        }
        switch try DomainEvent(decoding: recorded, keys: keys) {
        case .liked(let event):
            return try notification(to: event.postAuthor)
        case .commentAdded(let event):
            return try notification(to: event.postAuthor)
        case .reposted(let event):
            return try notification(to: event.postAuthor)
        case .followed(let event):
            return try notification(to: event.followee)
        case .messageSent(let event):
            guard
                case .message(let message)? = try view.liveChanges(
                    of: recorded, for: event.to, on: [.conversation(event.from)]
                ).first
            else { return [] }
            return [
                webhook("message.created", to: event.to) { data in
                    data.object {
                        $0.field("recipient", event.to.rawValue)
                        $0.field("message", renderer.message(message))
                    }
                }
            ]
        case .passwordResetRequested(let event):
            guard let email = try view.profile(event.user, viewer: event.user)?.email else { return [] }
            let token = tokens.resetToken(user: event.user, reset: event.reset)
            return [
                webhook("password_reset.requested", to: event.user) { data in
                    data.object {
                        $0.field("userId", event.user.rawValue)
                        $0.field("email", email)
                        $0.field("token", token)
                        $0.field("expiresAt", event.expiresAt)
                    }
                }
            ]
        case .reportFiled(let event):
            guard let report = try view.report(event.report) else { return [] }
            // The admins' queue is one recipient: reports go out in the order they were filed.
            return [
                webhook("report.filed", toRecipient: "moderation") { data in
                    data.object { $0.field("report", ReportJSON(report)) }
                }
            ]
        default:
            return []
        }
    }
}
