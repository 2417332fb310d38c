import ChorusDomain
import ChorusLog
import ChorusProcesses
import ChorusStorage
import Foundation
import Logging
import Synchronization

/// The read models a server answers from, which an online rebuild replaces whole while the server keeps answering.
///
/// ``ProjectionService`` applies the log to them as it grows and runs the rebuilds asked for. A rebuild builds a new
/// generation beside the served one from the log, catches it up with the live log, and swaps it in while the served
/// engine is between batches and the new one has reached at least its position: so no answer's position ever goes
/// backwards. Reads and waits that started on the old engine finish on it, or start over on the new one if it closed
/// under them.
public final class ServedReadModels: Sendable {
    /// What `GET /v1/admin/projections` shows of rebuilds.
    public enum RebuildState: Sendable, Equatable {
        case none
        case rebuilding(since: EventTime)
        case finished(at: LogPosition, swappedAt: EventTime)
        case failed(String)
    }

    private let log: any EventLog
    private let keys: any PersonalDataKeys
    /// See ``ProjectionEngine/init(log:keys:directory:batchSize:durable:fanOutLimit:logger:)``.
    private let fanOutLimit: Int
    private let generations: ProjectionGenerations
    private let unsynced: UnsyncedReadModels
    private let logger: Logger
    private let served: Mutex<ProjectionEngine>
    private let rebuild = Mutex<RebuildState>(.none)
    /// Events the running rebuild has replayed, and how many it replays.
    private let rebuildCounts = Mutex<(replayed: Int, total: Int)>((0, 0))
    /// Rebuilds asked for, which ``runRebuilds()`` runs one at a time.
    private let rebuildRequests = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    /// Counts the swaps, as a position that only moves forward: whoever follows one engine learns here that another
    /// replaced it.
    private let swaps = PositionNotifier(head: .start)
    /// Set by ``endShutdownWaits()``.
    private let isShutDown = Atomic<Bool>(false)

    /// Opens the current read models of the data directory at `dataDirectory` over `log`. They commit without syncing
    /// (see ``UnsyncedReadModels``); those a crash of the machine may have torn, and those of an older layout, are
    /// rebuilt from the log first.
    public init(
        log: any EventLog, keys: any PersonalDataKeys, dataDirectory: String,
        fanOutLimit: Int = ProjectionEngine.defaultFanOutLimit, logger: Logger
    ) throws {
        self.log = log
        self.keys = keys
        self.fanOutLimit = fanOutLimit
        self.logger = logger
        generations = ProjectionGenerations(dataDirectory: dataDirectory)
        try generations.prepareCurrent()
        unsynced = UnsyncedReadModels(generations)
        try unsynced.prepare(log: log, keys: keys, fanOutLimit: fanOutLimit, logger: logger)
        served = Mutex(
            try Self.open(log: log, keys: keys, generations: generations, fanOutLimit: fanOutLimit, logger: logger))
    }

    private static func open(
        log: any EventLog, keys: any PersonalDataKeys, generations: ProjectionGenerations, fanOutLimit: Int,
        logger: Logger
    ) throws -> ProjectionEngine {
        do {
            return try ProjectionEngine(
                log: log, keys: keys, directory: generations.current, durable: false, fanOutLimit: fanOutLimit,
                logger: logger)
        } catch ProjectionError.layoutChanged(let found, let current) {
            logger.notice(
                "the read models have an older layout; rebuilding them from the log",
                metadata: ["found": "\(found)", "current": "\(current)"])
            let position = try generations.rebuildAndSwap(
                log: log, keys: keys, fanOutLimit: fanOutLimit, logger: logger)
            logger.notice("read models rebuilt", metadata: ["position": "\(position)"])
            return try ProjectionEngine(
                log: log, keys: keys, directory: generations.current, durable: false, fanOutLimit: fanOutLimit,
                logger: logger)
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

    /// Lends `body` a snapshot of the served read models; started over on the new ones if a rebuild swapped them in
    /// meanwhile.
    public func snapshot<Answer: Sendable>(_ body: (borrowing ReadView) throws -> Answer) throws -> Snapshot<Answer> {
        try onServed { try $0.snapshot(body) }
    }

    /// ``snapshot(_:)`` with what the answer was read from (``ProjectionEngine/snapshotWithFootprint(_:)``).
    public func snapshotWithFootprint<Answer: Sendable>(_ body: (borrowing ReadView) throws -> Answer) throws -> (
        Snapshot<Answer>, ReadFootprint
    ) {
        try onServed { try $0.snapshotWithFootprint(body) }
    }

    /// Runs `read` on the served engine, and again on the new one if a rebuild swapped it in and closed the old one
    /// under the read.
    private func onServed<R>(_ read: (ProjectionEngine) throws -> R) throws -> R {
        let engine = current
        do {
            return try read(engine)
        } catch  where engine !== current {
            return try read(current)
        }
    }

    /// The position at which an answer read with `footprint` still holds on the served read models; nil when it does
    /// not, or other read models were swapped in since (``ProjectionEngine/unchangedPosition(of:)``).
    public func unchangedPosition(of footprint: ReadFootprint) -> LogPosition? {
        current.unchangedPosition(of: footprint)
    }

    /// Waits until the served read models have applied `position` (``ProjectionError/notCaughtUp(wanted:applied:)``
    /// after `timeout`), across a swap.
    public func waitUntilApplied(_ position: LogPosition, timeout: Duration) async throws {
        let deadline = ContinuousClock.now + timeout
        while true {
            let engine = current
            do {
                return try await engine.waitUntilApplied(position, until: deadline)
            } catch  where engine !== current {
                continue
            }
        }
    }

    /// The position the served read models reach after `position`, across a swap; nil once `deadline` has passed
    /// first. With `endsOnShutdown` (a live stream's wait), `CancellationError` once ``endShutdownWaits()`` is called.
    public func waitForPosition(
        after position: LogPosition, until deadline: ContinuousClock.Instant, endsOnShutdown: Bool = false
    ) async throws -> LogPosition? {
        while true {
            // The engine first, then the flag: a call in between ends the waits of that engine, or of the one swapped
            // in after it (the old one's waits end with the swap, and start over here).
            let engine = current
            if endsOnShutdown, isShutDown.load(ordering: .sequentiallyConsistent) { throw CancellationError() }
            do {
                return try await engine.waitForPosition(
                    after: position, until: deadline, endsOnShutdown: endsOnShutdown)
            } catch  where engine !== current {
                if current.position > position { return current.position }
            }
        }
    }

    /// Ends the waits made with `endsOnShutdown`, and each one made after it at once: on the server's graceful
    /// shutdown, its live streams end.
    public func endShutdownWaits() {
        isShutDown.store(true, ordering: .sequentiallyConsistent)
        current.endShutdownWaits()
    }

    /// Asks for an online rebuild, unless one is running (``ProjectionService`` runs it); returns the state it leaves.
    @discardableResult
    public func requestRebuild() -> RebuildState {
        let started = rebuild.withLock { state -> Bool in
            if case .rebuilding = state { return false }
            state = .rebuilding(since: .now)
            rebuildCounts.withLock { $0 = (0, Int(clamping: log.head.rawValue)) }
            return true
        }
        if started { rebuildRequests.continuation.yield() }
        return rebuildState
    }

    /// Applies the log to the served read models as it grows, moving on to the new ones whenever a rebuild swaps them
    /// in, until the task is cancelled or the log closes.
    func follow() async {
        while !Task.isCancelled {
            let swapsSoFar = swaps.head
            let engine = current
            let swapped = await withTaskGroup(of: Bool.self) { group in
                group.addTask {
                    do {
                        try await engine.run()
                    } catch {
                        self.logger.error("the read models stopped following the log", metadata: ["error": "\(error)"])
                    }
                    return false
                }
                group.addTask { (try? await self.swaps.waitForHead(after: swapsSoFar)) != nil }
                defer { group.cancelAll() }
                return await group.next() ?? false
            }
            // The engine stopped by itself (the log closed) and was not swapped out meanwhile.
            guard swapped || engine !== current else { return }
        }
    }

    /// Runs the rebuilds asked for, one at a time, until the task is cancelled, which abandons the one running.
    func runRebuilds() async {
        for await _ in rebuildRequests.stream {
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
        // Asked for, but never run: the server stopped first.
        rebuild.withLock { state in
            if case .rebuilding = state { state = .failed("abandoned: the server stopped") }
        }
    }

    /// Builds new read models beside the served ones, swaps them in once caught up, and retires the old ones.
    func rebuildAndSwap() async throws -> LogPosition {
        let (name, path) = try generations.newGeneration()
        logger.notice("rebuilding the read models online", metadata: ["generation": "\(name)"])
        return try await swapIn(name, at: path)
    }

    /// Copies the served read models into a new generation with LMDB's compacting copy (free pages left out, and of
    /// each page only what it holds), catches the copy up and swaps it in as a rebuild is; the old generation's files
    /// are removed. What deleted data the served store's freed pages still held is in no file afterwards.
    public func compactAndSwap() async throws -> LogPosition {
        let (name, path) = try generations.newGeneration()
        let served = current
        try await BlockingWork.run {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            try served.store.copyCompacted(to: path)
        }
        return try await swapIn(name, at: path)
    }

    /// Opens the read models at `path` (generation `name`), brings them to the log's head, swaps them in for the
    /// served ones, and retires those.
    private func swapIn(_ name: String, at path: String) async throws -> LogPosition {
        let (log, keys, fanOutLimit, logger) = (self.log, self.keys, self.fanOutLimit, self.logger)
        let fresh = try await BlockingWork.run { [self] in
            let engine = try ProjectionEngine(
                log: log, keys: keys, directory: path, batchSize: 16_384, durable: false, fanOutLimit: fanOutLimit,
                logger: logger)
            // The bulk, then what arrived meanwhile, until little is left for the swap itself.
            repeat {
                try engine.catchUp { replayed, total in rebuildCounts.withLock { $0 = (replayed, total) } }
                rebuildCounts.withLock {
                    $0 = (Int(clamping: engine.position.rawValue), Int(clamping: log.head.rawValue))
                }
                // Compared without subtracting: the engine reads what the writer committed before the head it publishes
                // moves, so it can be ahead of `log.head`, where the difference overflowed (and stopped the process).
            } while log.head.rawValue > engine.position.rawValue + 1_000
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
        swaps.publish(swaps.head.next)
        try generations.makeCurrent(name)
        // Waits for reads still open on the old engine; waits on it end and start over on the new one.
        try old.store.sync()
        old.close()
        logger.notice("swapped in the new read models", metadata: ["position": "\(fresh.position)"])
        return fresh.position
    }

    /// Syncs and closes the served read models. If the sync fails, the marker of unsynced commits stays, and the next
    /// start after a crash of the machine rebuilds them.
    public func close() throws {
        let engine = current
        defer { engine.close() }
        try engine.store.sync()
        unsynced.markSynced()
    }
}
