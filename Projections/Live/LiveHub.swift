import ChorusDomain
import ChorusLog
import Synchronization

/// Walks the events the read models apply once for every open live stream, and wakes only the streams that an event
/// may concern (``LiveInterest``) or whose heartbeat is due. Each stream used to wait for every batch itself and look
/// at its events: with a thousand streams open, waking all of them for every batch took most of the server
/// (`chorus bench day`), where a batch that concerns ten of them now wakes ten.
///
/// A stream walks the events up to where the hub has walked (``subscribe(_:through:heartbeat:)`` says how far), then
/// hands its interest over: from then on the hub learns from every event for it (whom its viewer follows) and keeps
/// the events that may concern it until the stream takes them (``next(_:)``). It finds the streams an event may
/// concern by the event's subjects (``LiveStreamIndex``), not by asking each stream: a batch costs what it concerns.
/// The hub runs while a stream is subscribed.
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

    /// One subscribed stream. An object: looked up for each event that may concern it, and for heartbeats, it is
    /// changed in place, never copied out with its followees and the events kept for it.
    private final class Subscriber {
        var interest: LiveInterest
        /// The last position the stream walked itself before it subscribed: the hub walks on from there for it.
        let subscribedThrough: LogPosition
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

        init(_ interest: LiveInterest, through position: LogPosition, heartbeat: Duration, now: ContinuousClock.Instant)
        {
            (self.interest, subscribedThrough, given) = (interest, position, position)
            (self.heartbeat, heartbeatDue) = (heartbeat, now + heartbeat)
        }

        /// Whether the hub walks the event at `position` for the stream.
        func walks(_ position: LogPosition) -> Bool { !fellBehind && position > subscribedThrough }

        /// Keeps `entry` for the stream, unless that makes more than `maximumPending`: then the stream falls behind.
        func keep(_ entry: Entry, keepingAtMost maximumPending: Int) {
            // An event with several subjects the stream listens to is found once for each.
            guard pending.last !== entry else { return }
            pending.append(entry)
            if pending.count > maximumPending { (fellBehind, pending) = (true, []) }
        }

        /// Whether the stream has something to take by `now`.
        func isDue(_ now: ContinuousClock.Instant) -> Bool { fellBehind || !pending.isEmpty || heartbeatDue <= now }
    }

    private struct State {
        /// The last position walked for every subscribed stream.
        var position = LogPosition.start
        var isRunning = false
        var isShutDown = false
        var subscribers: [UInt64: Subscriber] = [:]
        var index = LiveStreamIndex()
        /// The streams with events kept, or fallen behind: those to wake when they wait.
        var due: Set<UInt64> = []
        /// No waiting stream's heartbeat is due before this.
        var heartbeatCheck = ContinuousClock.now
        var nextID: UInt64 = 0
        /// Why the hub last stopped on an error: what a stream it dropped then is told.
        var failure: (any Error)?

        mutating func add(_ subscriber: Subscriber) -> UInt64 {
            let id = nextID
            nextID += 1
            subscribers[id] = subscriber
            index.add(id, subscriber.interest)
            heartbeatCheck = min(heartbeatCheck, subscriber.heartbeatDue)
            return id
        }

        mutating func remove(_ id: UInt64) -> Subscriber? {
            index.remove(id)
            due.remove(id)
            return subscribers.removeValue(forKey: id)
        }

        /// Takes what stream `id` has to take by `now` (``Subscriber/isDue(_:)``); a stream fallen behind is
        /// subscribed no more.
        mutating func take(_ id: UInt64, now: ContinuousClock.Instant) -> Delivery? {
            guard let subscriber = subscribers[id] else { return nil }
            subscriber.waiter = nil
            if subscriber.fellBehind {
                _ = remove(id)
                return .fellBehind(after: subscriber.given, interest: subscriber.interest)
            }
            due.remove(id)
            let events = subscriber.pending
            (subscriber.pending, subscriber.given) = ([], max(subscriber.subscribedThrough, position))
            subscriber.heartbeatDue = now + subscriber.heartbeat
            heartbeatCheck = min(heartbeatCheck, subscriber.heartbeatDue)
            return events.isEmpty ? .heartbeat : .events(events)
        }

        /// Learns from `events`, the next the hub walks, for every stream, and keeps for each those that may concern
        /// it; every follow in them is learnt before any is kept, as ``LiveInterest/learn(from:)`` asks.
        mutating func walk(_ events: ArraySlice<Entry>, keepingAtMost maximumPending: Int) {
            guard let last = events.last?.recorded.position else { return }
            for entry in events {
                guard case .followed(let followed) = entry.event else { continue }
                for id in index.streams(listeningTo: .feedOf(followed.follower)) {
                    guard let subscriber = subscribers[id], subscriber.walks(entry.recorded.position) else { continue }
                    index.update(id, learnt: subscriber.interest.learn(from: entry.event), subscriber.interest)
                }
            }
            var due: Set<UInt64> = []
            swap(&due, &self.due)
            defer { self.due = due }
            for entry in events {
                index.forEachStream(concernedBy: entry.event) { id in
                    guard let subscriber = subscribers[id], subscriber.walks(entry.recorded.position),
                        subscriber.interest.mayConcern(entry.event)
                    else { return }
                    subscriber.keep(entry, keepingAtMost: maximumPending)
                    due.insert(id)
                }
            }
            position = last
        }

        /// Takes for every waiting stream with events kept, fallen behind or a heartbeat due by `now`, and answers
        /// their waits and what they take.
        mutating func wake(now: ContinuousClock.Instant) -> [(CheckedContinuation<Delivery, any Error>, Delivery)] {
            var woken: [(CheckedContinuation<Delivery, any Error>, Delivery)] = []
            func wake(_ id: UInt64) {
                guard let waiter = subscribers[id]?.waiter, let delivery = take(id, now: now) else { return }
                woken.append((waiter, delivery))
            }
            for id in due { wake(id) }
            guard heartbeatCheck <= now else { return woken }
            // Streams past due that do not wait are busy sending: each takes its heartbeat when it next asks.
            heartbeatCheck = now + LiveHub.heartbeatCheckInterval
            for (id, subscriber) in subscribers {
                if subscriber.heartbeatDue <= now {
                    if subscriber.waiter != nil { wake(id) }
                } else {
                    heartbeatCheck = min(heartbeatCheck, subscriber.heartbeatDue)
                }
            }
            return woken
        }
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
            let id = state.add(Subscriber(interest, through: position, heartbeat: heartbeat, now: now))
            return (.subscribed(id), starts)
        }
        // On the global executor: created from a stream's request, a task would prefer that connection's event loop,
        // and the hub's walk for every stream would hold it (and wait behind its connections).
        if starts { Task(executorPreference: globalConcurrentExecutor) { await self.run() } }
        return subscription
    }

    /// Ends a stream's subscription.
    public func unsubscribe(_ id: UInt64) {
        let waiter = state.withLock { $0.remove(id)?.waiter }
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
                    guard let subscriber = state.subscribers[id] else {
                        return .failure(state.failure ?? CancellationError())
                    }
                    guard subscriber.isDue(now), let delivery = state.take(id, now: now) else {
                        subscriber.waiter = continuation
                        return nil
                    }
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
                // The next heartbeat due, or sooner: a stream that subscribes while the hub waits may be due first.
                return (state.position, min(state.heartbeatCheck, .now + Self.heartbeatCheckInterval))
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
                defer {
                    (state.subscribers, state.index, state.due) = ([:], LiveStreamIndex(), [])
                    (state.isRunning, state.failure) = (false, error)
                }
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
                state.withLock { $0.walk(events, keepingAtMost: maximumPending) }
                return last
            }
            guard let last else { return }
            walked = last
        }
    }

    /// Resumes the waiting streams that have events, or whose heartbeat is due.
    private func wake() {
        let now = ContinuousClock.now
        for (waiter, delivery) in state.withLock({ $0.wake(now: now) }) { waiter.resume(returning: delivery) }
    }
}
