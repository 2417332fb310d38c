import Synchronization

/// Publishes a position that only moves forward (the log's head, a projection's checkpoint) and wakes those waiting
/// for it to pass a position, or for a deadline.
///
/// Deadlines are kept here rather than by a timer per wait: every write waits for its read models with a 5-second
/// deadline, and a cancelled `Task.sleep` holds its timer until it would have fired, so a timer per wait kept five
/// seconds of writes' timers alive and scattered across the heap. Instead, each publish and one sweeping task (while
/// any deadline is pending, every ``sweepInterval``) end the waits whose deadline has passed.
package final class PositionNotifier: Sendable {
    /// How late a wait may end after its deadline when nothing is published meanwhile.
    package static let sweepInterval: Duration = .milliseconds(50)

    private struct Waiter {
        let after: LogPosition
        let deadline: ContinuousClock.Instant?
        /// Ended by ``endShutdownWaits()``.
        let endsOnShutdown: Bool
        let continuation: CheckedContinuation<LogPosition?, any Error>
    }

    private struct State {
        var head: LogPosition
        var isClosed = false
        /// Set by ``endShutdownWaits()``.
        var isShutDown = false
        var waiters: [UInt64: Waiter] = [:]
        var nextWaiterID: UInt64 = 0
        /// No pending deadline is earlier; nil when none is pending. It may be earlier than every pending one (its
        /// waiter was woken since), which costs one needless look at the waiters.
        var earliestDeadline: ContinuousClock.Instant?
        var isSweeping = false

        /// Removes the waiters that the head has passed, and those whose deadline has passed by `now`.
        mutating func takeFinished(now: ContinuousClock.Instant) -> [(Waiter, LogPosition?)] {
            let expiring = earliestDeadline.map { $0 <= now } ?? false
            var finished: [(id: UInt64, waiter: Waiter, head: LogPosition?)] = []
            var earliest: ContinuousClock.Instant?
            for (id, waiter) in waiters {
                if waiter.after < head {
                    finished.append((id, waiter, head))
                } else if expiring, let deadline = waiter.deadline {
                    if deadline <= now {
                        finished.append((id, waiter, nil))
                    } else {
                        earliest = min(earliest ?? deadline, deadline)
                    }
                }
            }
            if expiring { earliestDeadline = earliest }
            for (id, _, _) in finished { waiters.removeValue(forKey: id) }
            return finished.map { ($0.waiter, $0.head) }
        }
    }

    private let state: Mutex<State>

    package init(head: LogPosition) {
        state = Mutex(State(head: head))
    }

    package var head: LogPosition { state.withLock { $0.head } }

    /// Moves the position forward and wakes those waiting for it, and those whose deadline has passed.
    package func publish(_ head: LogPosition) {
        let finished = state.withLock { state -> [(Waiter, LogPosition?)] in
            state.head = head
            guard !state.waiters.isEmpty else { return [] }
            return state.takeFinished(now: .now)
        }
        for (waiter, head) in finished { waiter.continuation.resume(returning: head) }
    }

    /// Ends every wait with ``EventLogError/closed``.
    package func close() {
        let waiters = state.withLock { state in
            state.isClosed = true
            state.earliestDeadline = nil
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.continuation.resume(throwing: EventLogError.closed) }
    }

    /// Ends every wait made with `endsOnShutdown` with `CancellationError`, and each one made after it at once: a
    /// server's live streams, on its graceful shutdown. One call for all of them, where a shutdown handler set up for
    /// every wait of every stream (a task group and two tasks each time) had the server answer less than half the
    /// feed reads with 1,000 streams open.
    package func endShutdownWaits() {
        let ending = state.withLock { state in
            state.isShutDown = true
            let ending = state.waiters.filter { $0.value.endsOnShutdown }
            for id in ending.keys { state.waiters.removeValue(forKey: id) }
            return Array(ending.values)
        }
        for waiter in ending { waiter.continuation.resume(throwing: CancellationError()) }
    }

    /// Returns the head once it is past `position`; throws `CancellationError` or ``EventLogError/closed``.
    package func waitForHead(after position: LogPosition) async throws -> LogPosition {
        guard let head = try await wait(after: position, until: nil) else {
            preconditionFailure("only a deadline ends a wait without a head")
        }
        return head
    }

    /// Returns the head once it is past `position`, or nil once `deadline` has passed (up to ``sweepInterval``
    /// later); throws `CancellationError` or ``EventLogError/closed``, and with `endsOnShutdown`, `CancellationError`
    /// once ``endShutdownWaits()`` is called.
    package func waitForHead(
        after position: LogPosition, until deadline: ContinuousClock.Instant, endsOnShutdown: Bool = false
    ) async throws -> LogPosition? {
        try await wait(after: position, until: deadline, endsOnShutdown: endsOnShutdown)
    }

    private func wait(
        after position: LogPosition, until deadline: ContinuousClock.Instant?, endsOnShutdown: Bool = false
    ) async throws -> LogPosition? {
        let id = state.withLock { state in
            defer { state.nextWaiterID += 1 }
            return state.nextWaiterID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                var startSweeping = false
                let immediate = state.withLock { state -> Result<LogPosition?, any Error>? in
                    if state.head > position { return .success(state.head) }
                    if state.isClosed { return .failure(EventLogError.closed) }
                    if Task.isCancelled || (endsOnShutdown && state.isShutDown) { return .failure(CancellationError()) }
                    if let deadline {
                        if deadline <= .now { return .success(nil) }
                        state.earliestDeadline = min(state.earliestDeadline ?? deadline, deadline)
                        startSweeping = !state.isSweeping
                        state.isSweeping = true
                    }
                    state.waiters[id] = Waiter(
                        after: position, deadline: deadline, endsOnShutdown: endsOnShutdown, continuation: continuation)
                    return nil
                }
                if let immediate { continuation.resume(with: immediate) }
                // On the global executor: made from a request's wait, the task would prefer that connection's event
                // loop, and every deadline's end would wait behind the loop's connections.
                if startSweeping { Task(executorPreference: globalConcurrentExecutor) { await self.sweep() } }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Ends the waits whose deadline passes, every ``sweepInterval``, until no deadline is pending.
    private func sweep() async {
        while true {
            try? await Task.sleep(for: Self.sweepInterval)
            let (finished, done) = state.withLock { state in
                let finished = state.takeFinished(now: .now)
                if state.earliestDeadline == nil { state.isSweeping = false }
                return (finished, !state.isSweeping)
            }
            for (waiter, head) in finished { waiter.continuation.resume(returning: head) }
            if done { return }
        }
    }
}
