import ChorusBackend
import ChorusDomain
import ChorusLog
import ChorusStorage
import Foundation

/// One thing an outbox delivers: a webhook, a push. Deliveries of one queue (a webhook's recipient, a push's device)
/// go in log order, one at a time.
package protocol OutboxItem: Sendable, Equatable {
    /// The queue it waits in.
    var queue: String { get }
    func encode(to writer: inout PayloadWriter)
    init(from reader: inout PayloadReader) throws
}

/// An item that may hold a user's personal data in plain, and tells whether it does.
package protocol PersonalOutboxItem: OutboxItem {
    /// Whether the item is to or about one of `users`, and goes with their erasure.
    func concerns(_ users: Set<UserID>) -> Bool
}

/// A durable outbox: a store of its own in the data directory that follows the log with a checkpoint of its own, the
/// way a read model does. Following the log, it adds the items each event makes, and the checkpoint, in one durable
/// write; delivering, it takes each out once it arrived, or once it has failed for good.
///
/// Tables:
/// - `checkpoint`: `position` → the last log position whose items are in (u64 big-endian)
/// - `pending`: queue, NUL, sequence (the position and the item's place among that position's, u64 big-endian) →
///   ``Pending``: so each queue's items are in log order, and the first of each is the one due
/// - `stats`: `delivered`, `abandoned` and `removed` (u64 big-endian), `last-error` (UTF-8)
///
/// Items may hold personal data in plain: ``forget(where:)`` takes out a deleted account's, freed pages included.
package final class DeliveryOutbox<Item: OutboxItem>: Sendable {
    /// An item waiting, with how its delivery went so far.
    package struct Pending: Sendable, Equatable {
        package var item: Item
        /// Milliseconds since 1970; 0 before the first attempt.
        package var firstAttemptAt: Int64 = 0
        package var attempts: Int64 = 0
        package var nextAttemptAt: Int64 = 0
        package var lastError: String?

        init(item: Item) { self.item = item }
    }

    /// What the admin routes show of an outbox.
    package struct Status: Sendable, Equatable {
        package var delivered: UInt64
        package var pending: Int
        /// Pending items whose last attempt failed.
        package var failing: Int
        /// Given up on: failed for good, or for the whole retry window.
        package var abandoned: UInt64
        /// Recipients removed because their provider refused them for good (dead device tokens).
        package var removed: UInt64 = 0
        package var lastError: String?

        /// Nothing sent yet, nothing waiting: the status of a server with no outbox.
        package static var none: Status { Status(delivered: 0, pending: 0, failing: 0, abandoned: 0, lastError: nil) }
    }

    private static var checkpointKey: [UInt8] { Array("position".utf8) }
    private static var deliveredKey: [UInt8] { Array("delivered".utf8) }
    private static var abandonedKey: [UInt8] { Array("abandoned".utf8) }
    private static var removedKey: [UInt8] { Array("removed".utf8) }
    private static var lastErrorKey: [UInt8] { Array("last-error".utf8) }

    private let store: CompactableStore
    private let checkpointTable: StoreTable
    private let pendingTable: StoreTable
    private let statsTable: StoreTable

    /// Whether a service takes the log into it; an outbox left from an earlier configuration is not.
    package let isFollowed: Bool

    /// Opens (creating if needed) the outbox in `directory`. A new one starts at `startingAt`: deliveries are for what
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

    /// The last log position whose items are in.
    package var checkpoint: LogPosition {
        get throws { try store.read { try $0.position(Self.checkpointKey, in: checkpointTable) } ?? .start }
    }

    /// Adds the items of the events through `position`, each under its place (position, index among that position's),
    /// and moves the checkpoint, in one durable write.
    package func add(_ items: [(position: LogPosition, index: Int, item: Item)], through position: LogPosition) throws {
        try store.write { transaction in
            for entry in items {
                let sequence = entry.position.rawValue << 8 | UInt64(min(entry.index, 255))
                let key = Array(entry.item.queue.utf8) + [0] + StoredCount.bytes(LogPosition(sequence))
                try transaction.put(Pending(item: entry.item).encoded(), for: key, in: pendingTable)
            }
            try transaction.put(StoredCount.bytes(position), for: Self.checkpointKey, in: checkpointTable)
        }
    }

    /// The first pending item of each queue whose next attempt is due at `now`, with its key; at most `limit`.
    package func due(at now: Int64, limit: Int = .max) throws -> [(key: [UInt8], pending: Pending)] {
        try store.read { transaction in
            var due: [(key: [UInt8], pending: Pending)] = []
            var start: [UInt8] = []
            // One seek per queue: past its first item, on to the next queue (its name, then 1 after the NUL).
            while due.count < limit {
                var next: [UInt8]?
                try transaction.scan(pendingTable, from: start) { key, value in
                    let queue = Array(key[..<(key.count - 9)])
                    let pending = try Pending(decoding: Array(value))
                    if pending.nextAttemptAt <= now { due.append((Array(key), pending)) }
                    next = queue + [1]
                    return false
                }
                guard let next else { break }
                start = next
            }
            return due
        }
    }

    /// The queue and the log position of the item stored under `key`.
    package static func place(of key: [UInt8]) -> (queue: String, position: UInt64) {
        let sequence = key.suffix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return (String(decoding: key.dropLast(9), as: UTF8.self), sequence >> 8)
    }

    /// Takes out the pending items that `settled` says another sender settled: each queue's through its position.
    package func drop(settledThrough settled: [String: UInt64]) throws {
        guard !settled.isEmpty else { return }
        try store.write { transaction in
            var dropped: [[UInt8]] = []
            try transaction.scan(pendingTable) { key, _ in
                let place = Self.place(of: Array(key))
                if let through = settled[place.queue], place.position <= through { dropped.append(Array(key)) }
                return true
            }
            for key in dropped { try transaction.delete(key, in: pendingTable) }
        }
    }

    /// Every pending item, each queue's in log order: for the admin routes and tests.
    package func pending() throws -> [Pending] {
        try store.read { transaction in
            var pending: [Pending] = []
            try transaction.scan(pendingTable) { _, value in
                pending.append(try Pending(decoding: Array(value)))
                return true
            }
            return pending
        }
    }

    /// Milliseconds until the earliest next attempt, if anything is pending.
    package func earliestAttempt() throws -> Int64? {
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

    /// How one attempt at an item ended.
    package enum Outcome: Sendable, Equatable {
        /// It arrived: it is never sent again.
        case delivered
        /// It failed: tried again at `at` (milliseconds since 1970).
        case retry(at: Int64, error: String)
        /// It failed for good, or for the whole retry window: given up on, and counted.
        case abandoned(error: String)
        /// Its queue's recipient is gone (a device forgotten, or whose token the provider refused): the item and the
        /// rest of its queue are taken out; counted as removed when `refused`.
        case queueRemoved(error: String, refused: Bool)
    }

    /// Records how the attempts at `attempts` ended at `now`, in one durable write.
    package func settle(_ attempts: [(key: [UInt8], pending: Pending, outcome: Outcome)], at now: Int64) throws {
        guard !attempts.isEmpty else { return }
        try store.write { transaction in
            var counts: [[UInt8]: UInt64] = [:]
            for (key, pending, outcome) in attempts {
                switch outcome {
                case .delivered:
                    try transaction.delete(key, in: pendingTable)
                    counts[Self.deliveredKey, default: 0] += 1
                case .retry(let retryAt, let error):
                    try transaction.put(Array(error.utf8), for: Self.lastErrorKey, in: statsTable)
                    // Forgotten meanwhile (its account was deleted): it stays out.
                    guard try transaction.withValue(for: key, in: pendingTable, { $0 != nil }) else { continue }
                    var next = pending
                    if next.firstAttemptAt == 0 { next.firstAttemptAt = now }
                    next.attempts += 1
                    next.nextAttemptAt = retryAt
                    next.lastError = error
                    try transaction.put(next.encoded(), for: key, in: pendingTable)
                case .abandoned(let error):
                    try transaction.put(Array(error.utf8), for: Self.lastErrorKey, in: statsTable)
                    try transaction.delete(key, in: pendingTable)
                    counts[Self.abandonedKey, default: 0] += 1
                case .queueRemoved(let error, let refused):
                    if refused {
                        try transaction.put(Array(error.utf8), for: Self.lastErrorKey, in: statsTable)
                        counts[Self.removedKey, default: 0] += 1
                    }
                    var queued: [[UInt8]] = []
                    try transaction.scan(pendingTable, prefix: Array(key[..<(key.count - 8)])) { key, _ in
                        queued.append(Array(key))
                        return true
                    }
                    for key in queued { try transaction.delete(key, in: pendingTable) }
                }
            }
            for (key, count) in counts { try Self.count(key, by: count, in: statsTable, transaction) }
        }
    }

    /// It arrived: it is never sent again.
    package func delivered(_ key: [UInt8], _ pending: Pending) throws {
        try settle([(key, pending, .delivered)], at: 0)
    }

    /// The attempt failed: try again after `retryAt`, or give it up when that is nil.
    package func failed(_ key: [UInt8], _ pending: Pending, error: String, at now: Int64, retryAt: Int64?) throws {
        try settle([(key, pending, retryAt.map { .retry(at: $0, error: error) } ?? .abandoned(error: error))], at: now)
    }

    /// Makes every failing item due at `now` rather than at its next attempt (the console's "Retry now"); answers how
    /// many. Its sender picks them up at its next look, and a failure puts them back on their schedule.
    package func retryNow(at now: Int64) throws -> Int {
        try store.write { transaction in
            var waiting: [([UInt8], Pending)] = []
            try transaction.scan(pendingTable) { key, value in
                let pending = try Pending(decoding: Array(value))
                if pending.attempts > 0, pending.nextAttemptAt > now { waiting.append((Array(key), pending)) }
                return true
            }
            for (key, pending) in waiting {
                var due = pending
                due.nextAttemptAt = now
                try transaction.put(due.encoded(), for: key, in: pendingTable)
            }
            return waiting.count
        }
    }

    /// Waits, at most until `timeout`, until the outbox has taken in the log through `position` (at once if nothing
    /// takes the log into it).
    package func waitForCheckpoint(_ position: LogPosition, timeout: Duration) async throws {
        let deadline = ContinuousClock.now + timeout
        while isFollowed, try checkpoint < position {
            guard ContinuousClock.now < deadline else {
                throw OutboxBehind(directory: store.directory, checkpoint: try checkpoint, position: position)
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Takes out the pending items `forgets` names, and compacts the outbox, so that no freed page keeps them, nor the
    /// items delivered before. Dropped, not counted as abandoned: there is no one left to tell.
    package func forget(where forgets: (Item) -> Bool) throws {
        try store.write { transaction in
            var forgotten: [[UInt8]] = []
            try transaction.scan(pendingTable) { key, value in
                if forgets(try Pending(decoding: Array(value)).item) { forgotten.append(Array(key)) }
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
                removed: try transaction.position(Self.removedKey, in: statsTable)?.rawValue ?? 0,
                lastError: lastError)
        }
    }

    private static func count(_ key: [UInt8], by added: UInt64, in table: StoreTable, _ transaction: StoreTransaction)
        throws
    {
        let count = try transaction.position(key, in: table)?.rawValue ?? 0
        try transaction.put(StoredCount.bytes(LogPosition(count + added)), for: key, in: table)
    }
}

extension DeliveryOutbox: PersonalDataHolder where Item: PersonalOutboxItem {
    /// Takes out the pending items that concern `users`, once the outbox has taken in the log through their
    /// deletions, and compacts it.
    package func forget(_ users: [UserID], deletedThrough position: LogPosition, timeout: Duration) async throws {
        try await waitForCheckpoint(position, timeout: timeout)
        let users = Set(users)
        try forget { $0.concerns(users) }
    }
}

/// An outbox has not taken in the log through an account deletion yet; the erasure tries again.
struct OutboxBehind: Error, CustomStringConvertible {
    let directory: String
    let checkpoint: LogPosition
    let position: LogPosition

    var description: String {
        "the outbox \(directory) has taken in the log through \(checkpoint), not yet through the deletion at \(position)"
    }
}

/// The item's fields, then how its delivery went.
extension DeliveryOutbox.Pending {
    func encoded() -> [UInt8] {
        var writer = PayloadWriter()
        item.encode(to: &writer)
        writer.write(firstAttemptAt)
        writer.write(attempts)
        writer.write(nextAttemptAt)
        writer.write(lastError)
        return writer.bytes
    }

    init(decoding bytes: [UInt8]) throws {
        var reader = PayloadReader(bytes)
        item = try Item(from: &reader)
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
