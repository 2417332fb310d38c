import Foundation
import Logging
import Synchronization

/// The one owner of write transactions: group commit on a dedicated thread.
///
/// Every job waiting when the writer starts a transaction goes into that one transaction, which commits (fsync'd)
/// once; then each job is answered. Positions are assigned inside the transaction, so commit order is position order.
/// fsync blocks, so this is a thread of its own rather than a task on the shared cooperative pool.
final class LogWriter: @unchecked Sendable {
    struct Limits {
        var maximumEventsPerTransaction: Int
        var indexBatchSize: Int
    }

    private let environment: LMDBEnvironment
    private let schema: LogSchema
    private let notifier: HeadNotifier
    private let limits: Limits
    private let logger: Logger

    // Guarded by `condition`.
    private let condition = NSCondition()
    private var queue: [any WriteJob] = []
    private var state = State.idle
    private enum State { case idle, running, stopping, stopped }
    /// While gathering a group, submitters wake the writer when the queue reaches this many jobs.
    private var gatherTarget = 0
    private let finished = DispatchSemaphore(value: 0)

    // Touched only by the writer thread.
    private var head: LogPosition
    private var lastRecordedAt: EventTime
    /// Appended since the indexes were last written.
    private var tail: UnindexedTail
    /// What the last group commit tells about the next one: how many appenders it answered, how many others were
    /// already waiting when it finished, and how long it took.
    private var lastGroup = (jobs: 0, waiting: 0, duration: Duration.zero)

    private let commits = Atomic<Int>(0)
    private let committedJobs = Atomic<Int>(0)
    private let commitNanoseconds = Atomic<Int>(0)
    private let indexedThrough: Atomic<UInt64>

    init(
        environment: LMDBEnvironment, schema: LogSchema, notifier: HeadNotifier, head: LogPosition,
        lastRecordedAt: EventTime, tail: UnindexedTail, limits: Limits, logger: Logger
    ) {
        self.environment = environment
        self.schema = schema
        self.notifier = notifier
        self.head = head
        self.lastRecordedAt = lastRecordedAt
        self.tail = tail
        self.indexedThrough = Atomic(head.rawValue - UInt64(tail.eventCount))
        self.limits = limits
        self.logger = logger
    }

    /// Transactions committed, jobs answered through them, time from transaction start to durable commit, and the
    /// position the indexes are written through, since the log opened.
    var statistics: (commits: Int, jobs: Int, commitTime: Duration, indexedThrough: LogPosition) {
        (
            commits.load(ordering: .relaxed), committedJobs.load(ordering: .relaxed),
            .nanoseconds(commitNanoseconds.load(ordering: .relaxed)),
            LogPosition(indexedThrough.load(ordering: .relaxed))
        )
    }

    func start() {
        condition.lock()
        defer { condition.unlock() }
        guard state == .idle else { return }
        state = .running
        let thread = Thread { [self] in
            while let jobs = nextJobs() { commit(jobs) }
            if !tail.isEmpty { writeIndex(durable: true) }
            finished.signal()
        }
        thread.name = "chorus-log-writer"
        thread.start()
    }

    func submit(_ job: any WriteJob) throws(EventLogError) {
        condition.lock()
        defer { condition.unlock() }
        guard state == .running else { throw .closed }
        queue.append(job)
        if queue.count == 1 || queue.count == gatherTarget { condition.signal() }
    }

    /// Commits every job already submitted, writes the indexes, refuses new jobs, and waits for the thread to end.
    func stop() {
        condition.lock()
        let wasRunning = state == .running
        if state == .running || state == .idle { state = .stopping }
        condition.broadcast()
        condition.unlock()
        guard wasRunning else { return }
        finished.wait()
        condition.lock()
        state = .stopped
        condition.unlock()
    }

    /// Waits for work, then takes what is queued up to the transaction's event budget; nil once stopping with
    /// nothing left.
    private func nextJobs() -> [any WriteJob]? {
        condition.lock()
        defer { condition.unlock() }
        while queue.isEmpty && state == .running { condition.wait() }
        guard !queue.isEmpty else { return nil }
        gather()
        var taken = 0
        var events = 0
        while taken < queue.count, taken == 0 || events + queue[taken].eventCount <= limits.maximumEventsPerTransaction {
            events += queue[taken].eventCount
            taken += 1
        }
        if taken == queue.count {
            defer { queue.removeAll(keepingCapacity: true) }
            return queue
        }
        defer { queue.removeFirst(taken) }
        return Array(queue.prefix(taken))
    }

    /// After a group commit of n appends, most of their callers come straight back with their next append, a few at
    /// a time. Starting the transaction with the first few would spend a whole fsync on them and leave the rest for
    /// the next one; worse, the appenders then settle into two cohorts that take turns, each commit carrying half of
    /// them. So wait, at most half a commit's time, for those already waiting plus three quarters of the group just
    /// answered. A lone appender (a group of one, nobody else waiting) never waits. Called with the lock held.
    private func gather() {
        guard lastGroup.jobs > 1 else { return }
        let target = lastGroup.waiting + lastGroup.jobs * 3 / 4
        let wait = min(lastGroup.duration / 2, .milliseconds(1))
        let deadline = Date(timeIntervalSinceNow: Double(wait.components.attoseconds) / 1e18)
        gatherTarget = target
        while queue.count < target, state == .running, condition.wait(until: deadline) {}
        gatherTarget = 0
    }

    private func commit(_ jobs: [any WriteJob]) {
        let durable = jobs.contains { $0.durability == .durable }
        let recordedAt = max(EventTime.now, lastRecordedAt)
        let (startHead, committedTail) = (head, tail)
        let started = ContinuousClock.now
        do {
            let (newHead, staged) = try environment.write(durable: durable) { transaction in
                let batch = LogWriteBatch(
                    transaction: transaction, schema: schema, head: startHead, committedTail: committedTail,
                    recordedAt: recordedAt)
                for job in jobs { try job.stage(in: batch) }
                return (batch.head, batch.staged)
            }
            head = newHead
            lastRecordedAt = recordedAt
            tail.append(contentsOf: staged)
            lastGroup = (jobs.count, waitingCount(), recordCommit(jobs: jobs.count, since: started))
            notifier.publish(newHead)
            for job in jobs { job.succeed() }
        } catch {
            let failure =
                (error as? LMDBError).map(EventLogError.storage)
                ?? EventLogError(.storage, "the commit failed: \(error)")
            logger.error("log commit failed", metadata: ["jobs": "\(jobs.count)", "error": "\(failure.message)"])
            for job in jobs { job.fail(failure) }
        }
        // After answering: the callers need not wait for the index.
        if tail.eventCount >= limits.indexBatchSize { writeIndex(durable: durable) }
    }

    /// Writes the tail into the indexes; on failure keeps it, to try again after a later commit.
    private func writeIndex(durable: Bool) {
        do {
            try environment.write(durable: durable) { transaction in
                try LogIndex(schema: schema).write(tail, through: head, in: transaction)
            }
            tail.removeAll()
            indexedThrough.store(head.rawValue, ordering: .relaxed)
        } catch {
            logger.error("writing the log's indexes failed; will retry", metadata: ["error": "\(error)"])
        }
    }

    private func waitingCount() -> Int {
        condition.lock()
        defer { condition.unlock() }
        return queue.count
    }

    /// Counts a commit and returns how long it took.
    private func recordCommit(jobs: Int, since started: ContinuousClock.Instant) -> Duration {
        let elapsed = ContinuousClock.now - started
        commits.add(1, ordering: .relaxed)
        committedJobs.add(jobs, ordering: .relaxed)
        let (seconds, attoseconds) = elapsed.components
        commitNanoseconds.add(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000), ordering: .relaxed)
        return elapsed
    }
}
