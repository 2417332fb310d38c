import ChorusLog
import ChorusProjections

/// What the outbox sends for an event: which webhooks it makes, to whom, with which bodies, read from the read models
/// as they are at the event's position or later. The HTTP API's renders the same objects its answers hold.
package protocol WebhookContent: Sendable {
    /// The webhooks `recorded` makes, in the order they are sent.
    func webhooks(of recorded: RecordedEvent, in view: borrowing ReadView) throws -> [Webhook]
}
