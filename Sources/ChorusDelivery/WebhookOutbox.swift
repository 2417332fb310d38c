import ChorusBackend
import ChorusDomain
import ChorusLog

/// One webhook to send.
package struct Webhook: OutboxItem {
    /// `webhook-id`: stable across retries.
    package let id: String
    package let type: String
    /// Whom it is about: its order is kept per recipient.
    package let recipient: String
    package let body: [UInt8]

    package init(id: String, type: String, recipient: String, body: [UInt8]) {
        self.id = id
        self.type = type
        self.recipient = recipient
        self.body = body
    }

    package var queue: String { recipient }

    package func encode(to writer: inout PayloadWriter) {
        writer.write(id)
        writer.write(type)
        writer.write(recipient)
        writer.write(String(decoding: body, as: UTF8.self))
    }

    package init(from reader: inout PayloadReader) throws {
        self.init(
            id: try reader.readString(), type: try reader.readString(), recipient: try reader.readString(),
            body: Array(try reader.readString().utf8))
    }

    /// The type of the webhook that tells the receiver an account was deleted: it names the user's id alone, and is the
    /// one webhook about a deleted user that an erasure keeps (``concerns(_:)``).
    package static let accountDeletedType = "account.deleted"
}

/// The durable outbox of webhooks, `webhooks/` in the data directory, in order per recipient. Bodies hold names and
/// texts in plain; a deleted account's are forgotten within the erasure delay.
package typealias WebhookOutbox = DeliveryOutbox<Webhook>

extension Webhook: PersonalOutboxItem {
    /// Webhooks to or about one of `users` (whose body names one of their ids), but the one saying they were deleted.
    package func concerns(_ users: Set<UserID>) -> Bool {
        guard type != Self.accountDeletedType else { return false }
        return users.contains(UserID(unchecked: recipient))
            || users.contains { body.contains(Array("\"\($0.rawValue)\"".utf8)) }
    }
}
