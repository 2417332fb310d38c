import ChorusLog
import Synchronization

/// Sessions found in the decision state, kept to answer every request of theirs without reading the state again (a
/// read transaction and a lookup on every request, of which a kept feed page has little else).
///
/// A session's entry in the `sessions` table is written once, when it starts, and removed when it ends (logout, a
/// password change, an erasure), so what one read found holds until the log next removes a session: an entry counts
/// only while no removal is newer than the position it was read at (``ChorusLog/EventLog/newestRemoval(from:)``).
/// Expiry is checked on every use.
final class KnownSessions: Sendable {
    private struct Entry {
        let user: UserID
        let expiresAt: EventTime
        /// The position of the state it was read from.
        let readAt: LogPosition
    }

    /// Past this many, all are forgotten and found again as they come: some 20 MB of ids and entries.
    static let capacity = 100_000

    private let entries = Mutex<[SessionID: Entry]>([:])

    /// The user and expiry kept for `session`, unless it was read before `removedAt`, the newest removal from the
    /// `sessions` table: then it must be read again.
    func found(_ session: SessionID, removedAt: LogPosition) -> (user: UserID, expiresAt: EventTime)? {
        guard let entry = entries.withLock({ $0[session] }), entry.readAt >= removedAt else { return nil }
        return (entry.user, entry.expiresAt)
    }

    /// Keeps what a read of the state at `position` found for `session`.
    func keep(_ session: SessionID, user: UserID, expiresAt: EventTime, readAt position: LogPosition) {
        entries.withLock { entries in
            if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
            entries[session] = Entry(user: user, expiresAt: expiresAt, readAt: position)
        }
    }
}
