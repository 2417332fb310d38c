import ChorusLog
import ChorusProjections
import Foundation
import Logging
import Synchronization

/// The read models a server answers from, which an online rebuild replaces whole while the server keeps answering.
///
/// A rebuild builds a new generation beside the served one from the log, catches it up with the live log, and
/// swaps it in while the served engine is between batches and the new one has reached at least its position: so no
/// answer's position ever goes backwards. Reads and waits that started on the old engine finish on it, or start over
/// on the new one if it closed under them.
public final class ServedReadModels: Sendable {
    /// What `GET /v1/admin/projections` shows of rebuilds.
    public enum RebuildState: Sendable, Equatable {
        case none
        case rebuilding(since: EventTime)
        case finished(at: LogPosition, swappedAt: EventTime)
        case failed(String)
    }

    private let log: EventLog
    private let generations: ProjectionGenerations
    private let logger: Logger
    private let served: Mutex<ProjectionEngine>
    private let following = Mutex<Task<Void, Never>?>(nil)
    private let rebuild = Mutex<RebuildState>(.none)
    /// Events the running rebuild has replayed, and how many it replays.
    private let rebuildCounts = Mutex<(replayed: Int, total: Int)>((0, 0))
    private let rebuilding = Mutex<Task<Void, Never>?>(nil)

    init(log: EventLog, data: DataDirectory, logger: Logger) throws {
        self.log = log
        self.logger = logger
        generations = ProjectionGenerations(dataDirectory: data.root)
        served = Mutex(try Self.open(log: log, data: data, generations: generations, logger: logger))
    }

    /// Opens the current read models; those of an older layout are rebuilt from the log first.
    private static func open(log: EventLog, data: DataDirectory, generations: ProjectionGenerations, logger: Logger)
        throws -> ProjectionEngine
    {
        do {
            return try ProjectionEngine(log: log, directory: data.projections, durable: false, logger: logger)
        } catch ProjectionError.layoutChanged(let found, let current) {
            logger.notice(
                "the read models have an older layout; rebuilding them from the log",
                metadata: ["found": "\(found)", "current": "\(current)"])
            let position = try generations.rebuildAndSwap(log: log, logger: logger)
            logger.notice("read models rebuilt", metadata: ["position": "\(position)"])
            return try ProjectionEngine(log: log, directory: data.projections, durable: false, logger: logger)
        }
    }

    /// The engine answering now.
    public var current: ProjectionEngine { served.withLock { $0 } }

    public var rebuildState: RebuildState { rebuild.withLock { $0 } }

    /// How far the running rebuild is: events replayed into the new read models, of how many. Nil when none runs.
    public var rebuildProgress: (replayed: Int, total: Int)? {
        guard case .rebuilding = rebuildState else { return nil }
        return rebuildCounts.withLock { $0 }
    }

    /// Starts applying the log to the served read models as it grows.
    public func startFollowing() {
        let engine = current
        following.withLock { task in
            task?.cancel()
            // Applying a batch is synchronous work of milliseconds: it gets a thread of its own rather than one of
            // the few that answer requests (with `chorus serve`, the event loops themselves).
            task = Task(executorPreference: ProjectionThread.executor) { [logger] in
                do {
                    try await engine.run()
                } catch {
                    logger.error("the read models stopped following the log", metadata: ["error": "\(error)"])
                }
            }
        }
    }

    /// Stops following and waits until the batch being applied, if any, is done.
    public func stopFollowing() async {
        let task = following.withLock { task in
            defer { task = nil }
            return task
        }
        task?.cancel()
        await task?.value
    }

    /// A snapshot of the served read models; started over on the new ones if a rebuild swapped them in meanwhile.
    public func snapshot<Answer: Sendable>(_ body: (ReadView) throws -> Answer) throws -> Snapshot<Answer> {
        let engine = current
        do {
            return try engine.snapshot(body)
        } catch where engine !== current {
            return try current.snapshot(body)
        }
    }

    /// Waits until the served read models have applied `position` (``ProjectionError/notCaughtUp(wanted:applied:)``
    /// after `timeout`), across a swap.
    public func waitUntilApplied(_ position: LogPosition, timeout: Duration) async throws {
        let deadline = ContinuousClock.now + timeout
        while true {
            let engine = current
            do {
                return try await engine.waitUntilApplied(position, until: deadline)
            } catch where engine !== current {
                continue
            }
        }
    }

    /// The position the served read models reach after `position`, across a swap; nil once `deadline` has passed
    /// first.
    public func waitForPosition(after position: LogPosition, until deadline: ContinuousClock.Instant) async throws
        -> LogPosition?
    {
        while true {
            let engine = current
            do {
                return try await engine.waitForPosition(after: position, until: deadline)
            } catch where engine !== current {
                if current.position > position { return current.position }
            }
        }
    }

    /// Starts an online rebuild, unless one is running; returns the state it leaves.
    @discardableResult
    public func startRebuild() -> RebuildState {
        let started = rebuild.withLock { state -> Bool in
            if case .rebuilding = state { return false }
            state = .rebuilding(since: .now)
            rebuildCounts.withLock { $0 = (0, Int(clamping: log.head.rawValue)) }
            return true
        }
        if started {
            let task = Task {
                do {
                    let position = try await rebuildAndSwap()
                    rebuild.withLock { $0 = .finished(at: position, swappedAt: .now) }
                } catch is CancellationError {
                    logger.notice("the online rebuild was abandoned: the server is stopping")
                    rebuild.withLock { $0 = .failed("abandoned: the server stopped") }
                } catch {
                    logger.error("the online rebuild failed", metadata: ["error": "\(error)"])
                    rebuild.withLock { $0 = .failed("\(error)") }
                }
            }
            rebuilding.withLock { $0 = task }
        }
        return rebuildState
    }

    /// Abandons a running rebuild before it swaps (its generation is left for the next rebuild to replace), and
    /// waits for it to end: for shutdown.
    public func stopRebuild() async {
        let task = rebuilding.withLock { $0 }
        task?.cancel()
        await task?.value
    }

    /// Builds new read models beside the served ones, swaps them in once caught up, and retires the old ones.
    func rebuildAndSwap() async throws -> LogPosition {
        let (name, path) = try generations.newGeneration()
        logger.notice("rebuilding the read models online", metadata: ["generation": "\(name)"])
        let log = self.log
        let logger = self.logger
        let fresh = try await BlockingWork.run { [self] in
            let engine = try ProjectionEngine(log: log, directory: path, batchSize: 16_384, durable: false, logger: logger)
            // The bulk, then what arrived meanwhile, until little is left for the swap itself.
            repeat {
                try engine.catchUp { replayed, total in rebuildCounts.withLock { $0 = (replayed, total) } }
                rebuildCounts.withLock { $0 = (Int(clamping: engine.position.rawValue), Int(clamping: log.head.rawValue)) }
            } while log.head.rawValue - engine.position.rawValue > 1_000
            return engine
        }
        try Task.checkCancellation()
        let old = current
        try await BlockingWork.run {
            try old.retire {
                try fresh.catchUp()
                self.served.withLock { $0 = fresh }
            }
        }
        await stopFollowing()
        startFollowing()
        try generations.makeCurrent(name)
        // Waits for reads still open on the old engine; waits on it end and start over on the new one.
        try old.store.sync()
        old.close()
        logger.notice("swapped in the rebuilt read models", metadata: ["position": "\(fresh.position)"])
        return fresh.position
    }

    /// Syncs and closes the served read models.
    func close() throws {
        let engine = current
        defer { engine.close() }
        try engine.store.sync()
    }
}

/// The thread the served read models are applied on.
final class ProjectionThread: TaskExecutor {
    static let executor = ProjectionThread()

    private let queue = DispatchQueue(label: "chorus.projections")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
