import Synchronization

/// Publishes a position that only moves forward (the log's head, a projection's checkpoint) and wakes those waiting
/// for it to pass a position.
public final class PositionNotifier: Sendable {
    private struct Waiter {
        let after: LogPosition
        let continuation: CheckedContinuation<LogPosition, any Error>
    }

    private struct State {
        var head: LogPosition
        var isClosed = false
        var waiters: [UInt64: Waiter] = [:]
        var nextWaiterID: UInt64 = 0
    }

    private let state: Mutex<State>

    public init(head: LogPosition) {
        state = Mutex(State(head: head))
    }

    public var head: LogPosition { state.withLock { $0.head } }

    /// Moves the position forward and wakes those waiting for it.
    public func publish(_ head: LogPosition) {
        let ready = state.withLock { state -> [Waiter] in
            state.head = head
            guard !state.waiters.isEmpty else { return [] }
            var ready: [Waiter] = []
            state.waiters = state.waiters.filter { _, waiter in
                guard waiter.after < head else { return true }
                ready.append(waiter)
                return false
            }
            return ready
        }
        for waiter in ready { waiter.continuation.resume(returning: head) }
    }

    /// Ends every wait with ``EventLogError/closed``.
    public func close() {
        let waiters = state.withLock { state in
            state.isClosed = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.continuation.resume(throwing: EventLogError.closed) }
    }

    /// Returns the head once it is past `position`; throws `CancellationError` or ``EventLogError/closed``.
    public func waitForHead(after position: LogPosition) async throws -> LogPosition {
        let id = state.withLock { state in
            defer { state.nextWaiterID += 1 }
            return state.nextWaiterID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let immediate = state.withLock { state -> Result<LogPosition, any Error>? in
                    if state.head > position { return .success(state.head) }
                    if state.isClosed { return .failure(EventLogError.closed) }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    state.waiters[id] = Waiter(after: position, continuation: continuation)
                    return nil
                }
                if let immediate { continuation.resume(with: immediate) }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }
}
