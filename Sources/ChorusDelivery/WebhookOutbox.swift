import ChorusBackend
import ChorusDomain
import ChorusLog
import ChorusStorage
import Foundation

/// The durable outbox of webhooks: a store of its own in the data directory (`webhooks/`) that follows the log with a
/// checkpoint of its own, the way a read model does. Following the log, it adds the webhooks each event makes, and the
/// checkpoint, in one durable write; delivering, it takes them out once a 2xx came back, or once they have failed for
/// the whole retry window.
///
/// Tables:
/// - `checkpoint`: `position` → the last log position whose webhooks are in (u64 big-endian)
/// - `pending`: recipient, NUL, sequence (the position and the webhook's place among that position's, u64
///   big-endian) → ``Pending``: so each recipient's webhooks are in log order, and the first of each is the one due
/// - `stats`: `delivered` and `abandoned` (u64 big-endian), `last-error` (UTF-8)
///
/// Bodies hold names and texts in plain; a deleted account's are forgotten within the erasure delay
/// (``forget(_:deletedThrough:timeout:)``).
package final class WebhookOutbox: PersonalDataHolder {
    /// One webhook to send.
    package struct Webhook: Sendable, Equatable {
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
    }

    /// A webhook waiting, with how its delivery went so far.
    struct Pending: Sendable, Equatable {
        var webhook: Webhook
        /// Milliseconds since 1970; 0 before the first attempt.
        var firstAttemptAt: Int64 = 0
        var attempts: Int64 = 0
        var nextAttemptAt: Int64 = 0
        var lastError: String?
    }

    /// What `GET /v1/admin/webhooks` shows.
    package struct Status: Sendable, Equatable {
        package var delivered: UInt64
        package var pending: Int
        /// Pending webhooks whose last attempt failed.
        package var failing: Int
        /// Given up on after the retry window.
        package var abandoned: UInt64
        package var lastError: String?

        /// Nothing sent yet, nothing waiting: the status of a server with no outbox.
        package static let none = Status(delivered: 0, pending: 0, failing: 0, abandoned: 0, lastError: nil)
    }

    private static let checkpointKey = Array("position".utf8)
    private static let deliveredKey = Array("delivered".utf8)
    private static let abandonedKey = Array("abandoned".utf8)
    private static let lastErrorKey = Array("last-error".utf8)

    private let store: CompactableStore
    private let checkpointTable: StoreTable
    private let pendingTable: StoreTable
    private let statsTable: StoreTable

    /// Whether a ``WebhookService`` takes the log into it; an outbox left from when webhooks were configured is not.
    let isFollowed: Bool

    /// Opens (creating if needed) the outbox in `directory`. A new one starts at `startingAt`: webhooks are for what
    /// happens from when they are configured on, not for the history before.
    package init(directory: String, startingAt head: LogPosition, following: Bool = true) throws {
        isFollowed = following
        store = try CompactableStore(directory: directory, tables: ["checkpoint", "pending", "stats"])
        checkpointTable = store.table("checkpoint")
        pendingTable = store.table("pending")
        statsTable = store.table("stats")
        try store.write { transaction in
            if try transaction.position(Self.checkpointKey, in: checkpointTable) == nil {
                try transaction.put(StoredCount.bytes(head), for: Self.checkpointKey, in: checkpointTable)
            }
        }
    }

    package func close() { store.close() }

    /// The last log position whose webhooks are in.
    var checkpoint: LogPosition {
        get throws { try store.read { try $0.position(Self.checkpointKey, in: checkpointTable) } ?? .start }
    }

    /// Adds the webhooks of the events through `position`, each under its place (position, index among that
    /// position's), and moves the checkpoint, in one durable write.
    func add(_ webhooks: [(position: LogPosition, index: Int, webhook: Webhook)], through position: LogPosition) throws
    {
        try store.write { transaction in
            for entry in webhooks {
                let sequence = entry.position.rawValue << 8 | UInt64(min(entry.index, 255))
                let key = Array(entry.webhook.recipient.utf8) + [0] + StoredCount.bytes(LogPosition(sequence))
                try transaction.put(Pending(webhook: entry.webhook).encoded(), for: key, in: pendingTable)
            }
            try transaction.put(StoredCount.bytes(position), for: Self.checkpointKey, in: checkpointTable)
        }
    }

    /// The first pending webhook of each recipient whose next attempt is due at `now`, with its key.
    func due(at now: Int64) throws -> [(key: [UInt8], pending: Pending)] {
        try store.read { transaction in
            var due: [(key: [UInt8], pending: Pending)] = []
            var recipient: [UInt8]?
            try transaction.scan(pendingTable) { key, value in
                let owner = Array(key[..<(key.count - 8)])
                guard owner != recipient else { return true }
                recipient = owner
                let pending = try Pending(decoding: Array(value))
                if pending.nextAttemptAt <= now { due.append((Array(key), pending)) }
                return true
            }
            return due
        }
    }

    /// Milliseconds until the earliest next attempt, if anything is pending.
    func earliestAttempt() throws -> Int64? {
        try store.read { transaction in
            var earliest: Int64?
            try transaction.scan(pendingTable) { _, value in
                let next = try Pending(decoding: Array(value)).nextAttemptAt
                earliest = min(earliest ?? next, next)
                return true
            }
            return earliest
        }
    }

    /// A 2xx came back: the webhook is never sent again.
    func delivered(_ key: [UInt8]) throws {
        try store.write { transaction in
            try transaction.delete(key, in: pendingTable)
            try Self.count(Self.deliveredKey, in: statsTable, transaction)
        }
    }

    /// The attempt failed: try again after `retryAt`, unless the retry window is over (then it is given up on).
    func failed(_ key: [UInt8], _ pending: Pending, error: String, at now: Int64, retryAt: Int64?) throws {
        try store.write { transaction in
            try transaction.put(Array(error.utf8), for: Self.lastErrorKey, in: statsTable)
            guard let retryAt else {
                try transaction.delete(key, in: pendingTable)
                try Self.count(Self.abandonedKey, in: statsTable, transaction)
                return
            }
            // Forgotten meanwhile (its account was deleted): it stays out.
            guard try transaction.withValue(for: key, in: pendingTable, { $0 != nil }) else { return }
            var next = pending
            if next.firstAttemptAt == 0 { next.firstAttemptAt = now }
            next.attempts += 1
            next.nextAttemptAt = retryAt
            next.lastError = error
            try transaction.put(next.encoded(), for: key, in: pendingTable)
        }
    }

    /// The type of the webhook that tells the receiver an account was deleted: it names the user's id alone, and is the
    /// one webhook about a deleted user that ``forget(_:deletedThrough:timeout:)`` keeps.
    package static let accountDeletedType = "account.deleted"

    /// Takes out the pending webhooks to or about `users` (whose body names one of their ids) but the ones saying they
    /// were deleted, once it has taken in the log through their deletions (at once if nothing takes the log into it),
    /// then compacts the outbox so that no freed page keeps them, nor the bodies of webhooks delivered before. Dropped,
    /// not counted as abandoned: there is no one left to tell.
    package func forget(_ users: [UserID], deletedThrough position: LogPosition, timeout: Duration) async throws {
        let deadline = ContinuousClock.now + timeout
        while isFollowed, try checkpoint < position {
            guard ContinuousClock.now < deadline else {
                throw WebhookOutboxBehind(checkpoint: try checkpoint, position: position)
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        let ids = users.map { Array("\"\($0.rawValue)\"".utf8) }
        let recipients = Set(users.map(\.rawValue))
        try store.write { transaction in
            var forgotten: [[UInt8]] = []
            try transaction.scan(pendingTable) { key, value in
                let webhook = try Pending(decoding: Array(value)).webhook
                guard webhook.type != Self.accountDeletedType else { return true }
                if recipients.contains(webhook.recipient) || ids.contains(where: { webhook.body.contains($0) }) {
                    forgotten.append(Array(key))
                }
                return true
            }
            for key in forgotten { try transaction.delete(key, in: pendingTable) }
        }
        _ = try store.compact()
    }

    package func status() throws -> Status {
        try store.read { transaction in
            var pending = 0
            var failing = 0
            try transaction.scan(pendingTable) { _, value in
                pending += 1
                if try Pending(decoding: Array(value)).attempts > 0 { failing += 1 }
                return true
            }
            let lastError = try transaction.value(for: Self.lastErrorKey, in: statsTable).map {
                String(decoding: $0, as: UTF8.self)
            }
            return Status(
                delivered: try transaction.position(Self.deliveredKey, in: statsTable)?.rawValue ?? 0,
                pending: pending, failing: failing,
                abandoned: try transaction.position(Self.abandonedKey, in: statsTable)?.rawValue ?? 0,
                lastError: lastError)
        }
    }

    private static func count(_ key: [UInt8], in table: StoreTable, _ transaction: StoreTransaction) throws {
        let count = try transaction.position(key, in: table)?.rawValue ?? 0
        try transaction.put(StoredCount.bytes(LogPosition(count + 1)), for: key, in: table)
    }
}

/// The outbox has not taken in the log through an account deletion yet; the erasure tries again.
struct WebhookOutboxBehind: Error, CustomStringConvertible {
    let checkpoint: LogPosition
    let position: LogPosition

    var description: String {
        "the webhook outbox has taken in the log through \(checkpoint), not yet through the deletion at \(position)"
    }
}

extension WebhookOutbox.Pending {
    func encoded() -> [UInt8] {
        var writer = PayloadWriter()
        writer.write(webhook.id)
        writer.write(webhook.type)
        writer.write(webhook.recipient)
        writer.write(String(decoding: webhook.body, as: UTF8.self))
        writer.write(firstAttemptAt)
        writer.write(attempts)
        writer.write(nextAttemptAt)
        writer.write(lastError)
        return writer.bytes
    }

    init(decoding bytes: [UInt8]) throws {
        var reader = PayloadReader(bytes)
        webhook = WebhookOutbox.Webhook(
            id: try reader.readString(), type: try reader.readString(), recipient: try reader.readString(),
            body: Array(try reader.readString().utf8))
        firstAttemptAt = try reader.readInt64()
        attempts = try reader.readInt64()
        nextAttemptAt = try reader.readInt64()
        lastError = try reader.readOptionalString()
        try reader.finish()
    }
}

/// Positions and counts, stored as 8 big-endian bytes.
private enum StoredCount {
    static func bytes(_ position: LogPosition) -> [UInt8] {
        withUnsafeBytes(of: position.rawValue.bigEndian, Array.init)
    }
}

extension StoreTransaction {
    fileprivate func position(_ key: [UInt8], in table: StoreTable) throws -> LogPosition? {
        try withValue(for: key, in: table) { value in
            guard let value, value.count == 8 else { return nil }
            return LogPosition(UInt64(bigEndian: value.loadUnaligned(as: UInt64.self)))
        }
    }
}
