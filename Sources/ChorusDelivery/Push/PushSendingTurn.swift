import ChorusCluster
import Logging
import Synchronization

/// Whether this node sends pushes now: a single node always; a cluster's node while it holds the push lease
/// (``ClusterPushLease``), renewed every second. A node that takes the lease first drops from its outbox what the last
/// holder settled; one that does not hold it drops those every few seconds, so its outbox stays small.
package final class PushSendingTurn: Sendable {
    private struct State {
        /// Until when this node may send without renewing: a second short of the lease's term, for clocks.
        var heldUntil: ContinuousClock.Instant?
        var lastRenewal: ContinuousClock.Instant?
        var lastDrop: ContinuousClock.Instant?
    }

    private let lease: ClusterPushLease?
    private let logger: Logger
    private let state = Mutex(State())

    package init(lease: ClusterPushLease?, logger: Logger) {
        self.lease = lease
        self.logger = logger
    }

    /// Whether this node sends now, for the admin routes.
    package var isSending: Bool {
        guard lease != nil else { return true }
        return state.withLock { $0.heldUntil.map { ContinuousClock.now < $0 } ?? false }
    }

    /// Whether this node may send a batch now: takes or renews the lease when a second has passed since it last did.
    func maySend(_ outbox: PushOutbox) async -> Bool {
        guard let lease else { return true }
        let now = ContinuousClock.now
        let (held, due) = state.withLock { state in
            (
                state.heldUntil.map { now < $0 } ?? false,
                state.lastRenewal.map { now - $0 >= .seconds(1) } ?? true
            )
        }
        guard due else { return held }
        do {
            let holds = try await lease.acquire()
            let dropping = state.withLock { state in
                state.lastRenewal = now
                state.heldUntil = holds ? now + ClusterPushLease.term - .seconds(1) : nil
                let dropping = (holds && !held) || (!holds && state.lastDrop.map { now - $0 >= .seconds(5) } ?? true)
                if dropping { state.lastDrop = now }
                return dropping
            }
            if holds != held {
                logger.info(holds ? "pushes: this node sends them now" : "pushes: another node sends them now")
            }
            if dropping { try outbox.drop(settledThrough: try await lease.settledPositions()) }
            return holds
        } catch {
            // PostgreSQL out of reach: this node sends until its lease would have run out, and no longer.
            logger.warning("pushes: the push lease could not be renewed", metadata: ["error": "\(error)"])
            state.withLock { $0.lastRenewal = now }
            return held
        }
    }

    /// Tells the other nodes the queues' positions settled (delivered or given up): they drop those from their outboxes.
    func settled(_ keys: [[UInt8]]) async {
        guard let lease, !keys.isEmpty else { return }
        var positions: [String: UInt64] = [:]
        for key in keys {
            let place = PushOutbox.place(of: key)
            positions[place.queue] = max(positions[place.queue] ?? 0, place.position)
        }
        do {
            try await lease.settled(positions)
        } catch {
            // The next holder may send these again: at least once.
            logger.warning("pushes: settled pushes could not be recorded", metadata: ["error": "\(error)"])
        }
    }

    /// Gives the lease up when the node stops, so that another takes it at once.
    func release() async {
        guard let lease, isSending else { return }
        try? await lease.release()
    }
}
