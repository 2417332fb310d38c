import ChorusLMDBLog
import ChorusLog
import Foundation
import Logging
import Synchronization

/// The event log of a cluster: PostgreSQL holds the authoritative log, and this node's ``LMDBEventLog`` is a replica
/// of it, kept up by tailing (``Replicator``, ``ClusterTail``).
///
/// Reads (`head`, `read`, `scan`, `waitForHead`, `readState`) answer from the replica, so the read models, live
/// streams and operator tools work per node, unchanged. An append is decided on this node, against the replica as of
/// the cluster's last commit: the writer gathers the appends waiting, rehearses them on the replica (a write that is
/// rolled back) to learn their events and state changes, and sends those in one call. PostgreSQL takes them only if
/// no other commit came in between, so every decision was made against exactly the log before it (positions, taken
/// e-mails, idempotency records, all as on one machine); otherwise the node catches up and decides them again, which
/// is why `decide` may run more than once. Taken, the commit is applied to the replica, and the appends are answered.
public final class ClusterEventLog: EventLog {
    public let replica: LMDBEventLog
    public let database: ClusterDatabase
    let replicator: Replicator
    private let tail: ClusterTail
    private let queue = Mutex<WriteQueue>(WriteQueue())
    private let doorbell: AsyncStream<Void>.Continuation
    private let rings: AsyncStream<Void>
    private let logger: Logger
    private let commitObserver: (@Sendable (ClusterCommitReport) -> Void)?

    private struct WriteQueue {
        var jobs: [any ClusterWriteJob] = []
        var closed = false
    }

    /// `replica` must have been opened with ``replicaStateTables`` among its state tables. `onApplied` hears the events
    /// of every commit once the replica holds them; `commitObserver` hears of every commit this node makes.
    public init(
        replica: LMDBEventLog, database: ClusterDatabase, logger: Logger,
        onApplied: @escaping @Sendable ([RecordedEvent]) -> Void = { _ in },
        commitObserver: (@Sendable (ClusterCommitReport) -> Void)? = nil
    ) {
        self.replica = replica
        self.database = database
        self.logger = logger
        self.commitObserver = commitObserver
        replicator = Replicator(replica: replica, database: database, onApplied: onApplied)
        tail = ClusterTail(replicator: replicator, database: database, logger: logger)
        (rings, doorbell) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// The state tables a replica keeps besides the domain's: its own bookkeeping (the last commit applied).
    public static let replicaStateTables = [Replicator.table.name]

    /// The last commit the replica has applied.
    public func appliedCommit() throws -> UInt64 { try replicator.appliedCommit() }

    /// Brings the replica up to the cluster's last commit now.
    @discardableResult
    public func catchUp() async throws -> UInt64 { try await replicator.catchUp() }

    // MARK: Running

    /// Runs the replica's writer, the tail and the cluster writer until the task is cancelled; then refuses what is
    /// still queued and stops the replica's writer.
    public func run() async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.replica.run() }
            group.addTask { await self.tail.run() }
            group.addTask { await self.runWriter() }
            await withTaskCancellationHandler {
                // Each returns when cancelled: the whole group ends with the task.
                await group.waitForAll()
            } onCancel: {
                self.close()
            }
        }
    }

    private func close() {
        let abandoned = queue.withLock { queue in
            queue.closed = true
            defer { queue.jobs.removeAll() }
            return queue.jobs
        }
        doorbell.finish()
        for job in abandoned { job.fail(EventLogError(.closed, "the log is closed")) }
        replica.close()
    }

    private func runWriter() async {
        for await _ in rings {
            while case let jobs = takeQueued(), !jobs.isEmpty { await commit(jobs) }
        }
    }

    /// Decides `jobs` against the cluster's last commit and commits them there, deciding again after catching up as
    /// often as another node's commit comes first. The appends queued meanwhile join each new decision: under
    /// contention a node's turn then carries everything it has waiting, not only what it had when it first tried.
    private func commit(_ firstJobs: [any ClusterWriteJob]) async {
        var jobs = firstJobs
        let started = ContinuousClock.now
        var attempts = 0
        do {
            while true {
                attempts += 1
                if attempts > 1 { jobs += takeQueued() }
                // Another node's commit came first, or one was announced: fetch what the replica lacks. Otherwise
                // decide at once, and let PostgreSQL's check of the last commit catch a replica that is behind.
                if try attempts > 1 || replicator.mayBeBehind() { try await replicator.catchUp() }
                let eventCount = jobs.reduce(0) { $0 + $1.eventCount }
                let decided = try await replica.rehearse(eventCount: eventCount) { [jobs] batch in
                    let commit = try Replicator.appliedCommit(in: batch.state)
                    let head = batch.head
                    var (events, changes): ([RecordedEvent], [StateChange]) = ([], [])
                    for job in jobs {
                        let recording = RecordingBatch(batch)
                        job.stage(in: recording)
                        events += recording.events
                        changes += recording.changes
                    }
                    return Decided(after: commit, head: head, events: events, changes: changes)
                }
                guard !decided.events.isEmpty || !decided.changes.isEmpty else { break }
                if let number = try await send(decided) {
                    let commit = ClusterCommit(
                        number: number, firstPosition: decided.head.rawValue + 1,
                        lastPosition: decided.head.rawValue + UInt64(decided.events.count),
                        changes: StateChange.encode(decided.changes))
                    try await replicator.apply([(commit, decided.events)])
                    commitObserver?(ClusterCommitReport(attempts: attempts, duration: ContinuousClock.now - started))
                    break
                }
            }
        } catch {
            // The local log's own errors pass through; anything from the way to PostgreSQL (a dropped connection, the
            // server restarting) means the cluster cannot take writes now: a 503, not a 500.
            let failure =
                error is ClusterError || error is EventLogError
                ? error
                : ClusterError("the cluster's database could not be reached (\(ClusterError.summary(error)))")
            for job in jobs { job.fail(failure) }
            return
        }
        for job in jobs { job.succeed() }
    }

    /// The appends queued since the writer last looked, taken off the queue.
    private func takeQueued() -> [any ClusterWriteJob] {
        queue.withLock { queue in
            defer { queue.jobs.removeAll(keepingCapacity: true) }
            return queue.jobs
        }
    }

    private struct Decided: Sendable {
        /// The commit and the position it was decided after.
        let after: UInt64
        let head: LogPosition
        let events: [RecordedEvent]
        let changes: [StateChange]
    }

    /// The commit's number, or nil when another commit came first. When the answer is lost (the connection broke), asks
    /// whether the commit went through before answering.
    private func send(_ decided: Decided) async throws -> UInt64? {
        let batch = UUID()
        do {
            return try await database.append(
                expectedCommit: decided.after, batch: batch, records: decided.events.map(\.record),
                changes: StateChange.encode(decided.changes))
        } catch {
            logger.warning("an append to the cluster failed", metadata: ["error": "\(String(reflecting: error))"])
            if let committed = try? await database.commitNumber(ofBatch: batch) { return committed }
            throw ClusterError(
                "the cluster's database did not confirm the write (\(ClusterError.summary(error))); retry it with the "
                    + "same Idempotency-Key")
        }
    }

    // MARK: EventLog

    public var head: LogPosition { replica.head }

    public func read(from position: LogPosition, limit: Int) throws -> [RecordedEvent] {
        try replica.read(from: position, limit: limit)
    }

    public func readStreamBackward(_ stream: StreamID, from version: UInt64?, limit: Int) throws -> [RecordedEvent] {
        try replica.readStreamBackward(stream, from: version, limit: limit)
    }

    public func scan(
        from position: LogPosition, through last: LogPosition?, chunkSize: Int, _ body: (RecordedEvent) throws -> Void
    ) throws {
        try replica.scan(from: position, through: last, chunkSize: chunkSize, body)
    }

    public func waitForHead(after position: LogPosition) async throws -> LogPosition {
        try await replica.waitForHead(after: position)
    }

    public func readState<R>(_ body: (any StateReader) throws -> R) throws -> R {
        try replica.readState(body)
    }

    /// The replica's: every commit of the cluster, this node's or another's, is applied to it by its writer.
    public func newestRemoval(from table: StateTable) -> LogPosition? { replica.newestRemoval(from: table) }

    public func syncToDisk() throws { try replica.syncToDisk() }

    public func append<Output: Sendable>(
        _ durability: WriteDurability, eventCount: Int, decide: @escaping @Sendable (any DecisionBatch) throws -> Output
    ) async throws -> Output {
        try await withUnsafeThrowingContinuation { continuation in
            let job = ClusterContinuationJob(eventCount: eventCount, decide: decide, continuation: continuation)
            let accepted = queue.withLock { queue in
                guard !queue.closed else { return false }
                queue.jobs.append(job)
                return true
            }
            guard accepted else { return job.fail(EventLogError(.closed, "the log is closed")) }
            doorbell.yield()
        }
    }
}
