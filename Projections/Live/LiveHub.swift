import ChorusDomain
import ChorusLog
import Synchronization

/// Walks the events the read models apply once for every open live stream, and wakes only the streams that an event
/// may concern (``LiveInterest``) or whose heartbeat is due. Each stream used to wait for every batch itself and look
/// at its events: with a thousand streams open, waking all of them for every batch took most of the server
/// (BENCHMARKS.md, `chorus bench day`), where a batch that concerns ten of them now wakes ten.
///
/// A stream walks the events up to where the hub has walked (``subscribe(_:through:heartbeat:)`` says how far), then
/// hands its interest over: from then on the hub learns from every event for it (whom its viewer follows) and keeps
/// the events that may concern it until the stream takes them (``next(_:)``). The hub runs while a stream is
/// subscribed.
public final class LiveHub: Sendable {
    public typealias Entry = DecodedEventWindow.Entry

    /// What ``next(_:)`` answers.
    public enum Delivery: Sendable {
        /// The events that may concern the stream since it last asked, in log order.
        case events([Entry])
        /// Nothing since the stream's last delivery, and its heartbeat is due.
        case heartbeat
        /// The stream took too little of what the hub kept for it (``maximumPending``): it is no longer subscribed,
        /// and walks itself from the last position it was given, with the interest the hub learnt for it.
        case fellBehind(after: LogPosition, interest: LiveInterest)
    }

    /// What ``subscribe(_:through:heartbeat:)`` answers.
    public enum Subscription: Sendable, Equatable {
        /// Subscribed, under this id.
        case subscribed(UInt64)
        /// The hub has walked further than the stream: the stream walks up to this position, then subscribes again.
        case behind(LogPosition)
    }

    /// How long the hub waits at most for the read models before it looks for heartbeats that are due: a stream
    /// that subscribes while the hub waits may be due sooner than any stream before it.
    static let heartbeatCheckInterval: Duration = .milliseconds(50)

    private struct Subscriber {
        var interest: LiveInterest
        /// The last position walked for the stream.
        var through: LogPosition
        /// The last position walked when the stream last took its events: it has been given everything up to it.
        var given: LogPosition
        /// Set once more than the hub's ``LiveHub/maximumPending`` events waited for the stream: the hub walks no
        /// more for it.
        var fellBehind = false
        /// The events that may concern the stream, walked and not yet taken.
        var pending: [Entry] = []
        let heartbeat: Duration
        var heartbeatDue: ContinuousClock.Instant
        /// The stream's wait in ``next(_:)``, when it waits.
        var waiter: CheckedContinuation<Delivery, any Error>?

        /// Learns from the events after ``through`` and keeps those that may concern the stream; every follow in them
        /// is learnt before any is kept, as ``LiveInterest/learn(from:)`` asks.
        mutating func walk(_ events: ArraySlice<Entry>, keepingAtMost maximumPending: Int) {
            guard !fellBehind, let first = events.first?.recorded.position,
                let last = events.last?.recorded.position, last > through
            else { return }
            // One event a position: the first after `through` is this far in.
            let start = events.startIndex + (through < first ? 0 : Int(through.rawValue - first.rawValue) + 1)
            pending += interest.walk(events[start...])
            through = last
            if pending.count > maximumPending { (fellBehind, pending) = (true, []) }
        }

        /// Whether the stream has something to take by `now`.
        func isDue(_ now: ContinuousClock.Instant) -> Bool { fellBehind || !pending.isEmpty || heartbeatDue <= now }

        /// Takes what is pending (``isDue(_:)``), and sets the next heartbeat from `now`.
        mutating func take(now: ContinuousClock.Instant) -> Delivery {
            if fellBehind { return .fellBehind(after: given, interest: interest) }
            defer { (pending, given, heartbeatDue) = ([], through, now + heartbeat) }
            return pending.isEmpty ? .heartbeat : .events(pending)
        }
    }

    private struct State {
        /// The last position walked for every subscribed stream.
        var position = LogPosition.start
        var isRunning = false
        var isShutDown = false
        var subscribers: [UInt64: Subscriber] = [:]
        var nextID: UInt64 = 0
        /// Why the hub last stopped on an error: what a stream it dropped then is told.
        var failure: (any Error)?
    }

    private let readModels: ServedReadModels
    private let window: DecodedEventWindow
    private let state = Mutex(State())
    /// The most events the hub keeps for one stream: a stream that takes them more slowly than they come (its client
    /// reads slowly) walks itself again, from the window or the log, rather than have them pile up here.
    public let maximumPending: Int

    public init(readModels: ServedReadModels, window: DecodedEventWindow, maximumPending: Int = 4_096) {
        self.readModels = readModels
        self.window = window
        self.maximumPending = max(1, maximumPending)
    }

    /// Subscribes a stream whose `interest` has learnt from every event up to `position`, the last it walked, with a
    /// heartbeat due every `heartbeat` that nothing else is sent; or answers how far the hub has walked when that is
    /// further, for the stream to walk there first. Throws `CancellationError` once the server is shutting down.
    public func subscribe(_ interest: LiveInterest, through position: LogPosition, heartbeat: Duration) throws
        -> Subscription
    {
        let now = ContinuousClock.now
        let (subscription, starts) = try state.withLock { state throws -> (Subscription, Bool) in
            if state.isShutDown { throw CancellationError() }
            let starts = !state.isRunning
            if starts {
                (state.position, state.isRunning) = (position, true)
            } else if position < state.position {
                return (.behind(state.position), false)
            }
            let id = state.nextID
            state.nextID += 1
            state.subscribers[id] = Subscriber(
                interest: interest, through: position, given: position, heartbeat: heartbeat,
                heartbeatDue: now + heartbeat)
            return (.subscribed(id), starts)
        }
        // On the global executor: created from a stream's request, a task would prefer that connection's event loop,
        // and the hub's walk for every stream would hold it (and wait behind its connections).
        if starts { Task(executorPreference: globalConcurrentExecutor) { await self.run() } }
        return subscription
    }

    /// Ends a stream's subscription.
    public func unsubscribe(_ id: UInt64) {
        let waiter = state.withLock { $0.subscribers.removeValue(forKey: id)?.waiter }
        waiter?.resume(throwing: CancellationError())
    }

    /// The events that may concern the stream since it last asked, once there are any, or its heartbeat when that is
    /// due first. Throws `CancellationError` on the server's shutdown or the task's cancellation, and the hub's error
    /// if it stopped on one.
    public func next(_ id: UInt64) async throws -> Delivery {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let now = ContinuousClock.now
                let immediate = state.withLock { state -> Result<Delivery, any Error>? in
                    if state.isShutDown || Task.isCancelled { return .failure(CancellationError()) }
                    guard let isDue = state.subscribers[id]?.isDue(now) else {
                        return .failure(state.failure ?? CancellationError())
                    }
                    guard isDue else {
                        state.subscribers[id]?.waiter = continuation
                        return nil
                    }
                    let delivery = state.subscribers[id]!.take(now: now)
                    if case .fellBehind = delivery { state.subscribers.removeValue(forKey: id) }
                    return .success(delivery)
                }
                if let immediate { continuation.resume(with: immediate) }
            }
        } onCancel: {
            let waiter = state.withLock { state in
                defer { state.subscribers[id]?.waiter = nil }
                return state.subscribers[id]?.waiter
            }
            waiter?.resume(throwing: CancellationError())
        }
    }

    /// Ends every stream's wait, and each one begun after it at once: on the server's graceful shutdown.
    public func endShutdownWaits() {
        let waiters = state.withLock { state in
            state.isShutDown = true
            return state.subscribers.keys.compactMap { id in
                defer { state.subscribers[id]?.waiter = nil }
                return state.subscribers[id]?.waiter
            }
        }
        for waiter in waiters { waiter.resume(throwing: CancellationError()) }
    }

    /// Walks each position the read models apply, and wakes the streams with events or a heartbeat due, while any
    /// stream is subscribed. On an error, every stream is dropped and told.
    private func run() async {
        do {
            while let (walked, deadline) = state.withLock({ state -> (LogPosition, ContinuousClock.Instant)? in
                guard !state.subscribers.isEmpty else {
                    state.isRunning = false
                    return nil
                }
                // The next heartbeat due, or sooner. Those past due belong to streams busy sending: each takes its
                // heartbeat when it next asks.
                let now = ContinuousClock.now
                let latest = now + Self.heartbeatCheckInterval
                let soonest = state.subscribers.values.lazy.map(\.heartbeatDue).filter { $0 > now }.min() ?? latest
                return (state.position, min(soonest, latest))
            }) {
                // A heartbeat that falls due is sent once the stream has what the read models hold by then.
                let reached =
                    try await readModels.waitForPosition(after: walked, until: deadline, endsOnShutdown: true)
                    ?? readModels.current.position
                if reached > walked { try walk(from: walked, through: reached) }
                wake()
            }
        } catch {
            let waiters = state.withLock { state in
                defer { (state.subscribers, state.isRunning, state.failure) = ([:], false, error) }
                return state.subscribers.values.compactMap(\.waiter)
            }
            for waiter in waiters { waiter.resume(throwing: error) }
        }
    }

    /// Walks the events after `start` up to `end` for every subscribed stream.
    private func walk(from start: LogPosition, through end: LogPosition) throws {
        var walked = start
        while walked < end {
            let last = try window.withEvents(from: walked.next, through: end, limit: 1_000) { events in
                guard let last = events.last?.recorded.position else { return LogPosition?.none }
                state.withLock { state in
                    for index in state.subscribers.values.indices {
                        state.subscribers.values[index].walk(events, keepingAtMost: maximumPending)
                    }
                    state.position = last
                }
                return last
            }
            guard let last else { return }
            walked = last
        }
    }

    /// Resumes the waiting streams that have events, or whose heartbeat is due.
    private func wake() {
        let now = ContinuousClock.now
        let woken = state.withLock { state in
            var woken: [(CheckedContinuation<Delivery, any Error>, Delivery)] = []
            var fellBehind: [UInt64] = []
            // In place, by index: a subscriber copied out (its pending events and followees) for each of a thousand
            // streams at every batch is what the hub is here to spare.
            for index in state.subscribers.values.indices {
                guard let waiter = state.subscribers.values[index].waiter, state.subscribers.values[index].isDue(now)
                else { continue }
                woken.append((waiter, state.subscribers.values[index].take(now: now)))
                state.subscribers.values[index].waiter = nil
                if state.subscribers.values[index].fellBehind { fellBehind.append(state.subscribers.keys[index]) }
            }
            for id in fellBehind { state.subscribers.removeValue(forKey: id) }
            return woken
        }
        for (waiter, delivery) in woken { waiter.resume(returning: delivery) }
    }
}
