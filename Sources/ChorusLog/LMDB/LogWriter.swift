import ChorusStorage
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
        var indexBatchStreams: Int
        var commitObserver: (@Sendable (CommitReport) -> Void)?
    }

    private let environment: LMDBEnvironment
    private let schema: LogSchema
    private let notifier: PositionNotifier
    private let limits: Limits
    private let logger: Logger

    // Guarded by `condition`.
    private let condition = NSCondition()
    private var queue: [any WriteJob] = []
    private var state = State.idle
    /// Idle until ``run()`` starts the thread; stopping until it has committed what is queued.
    private enum State { case idle, running, stopping, stopped }
    /// While gathering a group, submitters wake the writer when the queue reaches this many jobs.
    private var gatherTarget = 0
    /// Entered while ``run()``'s thread runs.
    private let running = DispatchGroup()

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
        environment: LMDBEnvironment, schema: LogSchema, notifier: PositionNotifier, head: LogPosition,
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

    /// Runs the group-commit loop on a thread of its own until ``requestStop()`` or ``stop()``: commits what was
    /// submitted before it started and meanwhile, then writes the indexes. Returns at once once stopped.
    func run() async {
        let starts = condition.withLock {
            guard state == .idle else { return false }
            state = .running
            running.enter()
            return true
        }
        guard starts else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let thread = Thread { [self] in
                setCurrentThreadName("chorus-log-writer")
                while let first = nextJobs() { commit(startingWith: first) }
                if !tail.isEmpty { writeIndex(durable: true) }
                condition.withLock { state = .stopped }
                running.leave()
                continuation.resume()
            }
            thread.start()
        }
    }

    /// Queued until ``run()`` takes it; refused once stopping.
    func submit(_ job: any WriteJob) throws(EventLogError) {
        condition.lock()
        defer { condition.unlock() }
        guard state == .running || state == .idle else { throw .closed }
        queue.append(job)
        if queue.count == 1 || queue.count == gatherTarget { condition.signal() }
    }

    /// Asks ``run()`` to commit what is queued and end, without waiting for it; before it starts, stops it from
    /// starting.
    func requestStop() {
        let abandoned = condition.withLock { beginStopping() }
        for job in abandoned { job.fail(.closed) }
    }

    /// Like ``requestStop()``, then waits until ``run()``'s thread has committed what was queued and ended.
    func stop() {
        requestStop()
        running.wait()
    }

    /// Called with the lock held: a running writer drains and ends; an idle one will not start, and the jobs that
    /// waited for it are returned, to be refused.
    private func beginStopping() -> [any WriteJob] {
        switch state {
        case .idle:
            state = .stopped
            defer { queue.removeAll() }
            return queue
        case .running:
            state = .stopping
            condition.broadcast()
            return []
        case .stopping, .stopped:
            return []
        }
    }

    /// Waits for work and takes what is queued, up to the transaction's event budget; nil once stopping with nothing
    /// left.
    private func nextJobs() -> [any WriteJob]? {
        condition.lock()
        defer { condition.unlock() }
        while queue.isEmpty && state == .running { condition.wait() }
        guard !queue.isEmpty else { return nil }
        return takeQueued(eventBudget: limits.maximumEventsPerTransaction)
    }

    /// Takes queued jobs in order while they fit in `eventBudget` (always at least one). Called with the lock held.
    /// A rehearsal is taken alone: its transaction is rolled back, so nothing else may share it.
    private func takeQueued(eventBudget: Int) -> [any WriteJob] {
        if queue.first?.rollsBack == true { return [queue.removeFirst()] }
        var taken = 0
        var events = 0
        while taken < queue.count, !queue[taken].rollsBack,
            taken == 0 || events + queue[taken].eventCount <= eventBudget
        {
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
    /// a time. Committing the first few alone would spend a whole fsync on them and leave the rest for the next one;
    /// worse, the appenders then settle into two cohorts that take turns, each commit carrying half of them. So the
    /// writer gathers: it waits, at most half a commit's time, for those already waiting plus three quarters of those
    /// just answered, staging each arrival in the open transaction meanwhile. A lone appender never waits.
    private struct Gathering {
        /// Jobs still expected.
        var remaining: Int
        let deadline: Date
    }

    private func gathering(after first: [any WriteJob]) -> Gathering? {
        guard lastGroup.jobs > 1 else { return nil }
        let expected = lastGroup.waiting + lastGroup.jobs * 3 / 4 - first.count
        guard expected > 0 else { return nil }
        let wait = min(lastGroup.duration / 2, .milliseconds(1))
        return Gathering(
            remaining: expected, deadline: Date(timeIntervalSinceNow: Double(wait.components.attoseconds) / 1e18))
    }

    /// The next arrivals to stage while gathering: waits until a few more are queued, or the deadline passes; empty
    /// when the group is complete.
    private func arrivals(_ gathering: inout Gathering?, eventBudget: Int) -> [any WriteJob] {
        guard var current = gathering, current.remaining > 0, eventBudget > 0 else { return [] }
        condition.lock()
        defer { condition.unlock() }
        // Woken after every few arrivals, so that staging keeps pace with them.
        let batch = min(current.remaining, 16)
        gatherTarget = batch
        while queue.count < batch, state == .running, condition.wait(until: current.deadline) {}
        gatherTarget = 0
        let pastDeadline = Date() >= current.deadline
        let taken = queue.isEmpty ? [] : takeQueued(eventBudget: eventBudget)
        current.remaining -= taken.count
        gathering = pastDeadline || state != .running ? nil : current
        return taken
    }

    private func commit(startingWith first: [any WriteJob]) {
        if first.count == 1, first[0].rollsBack { return rehearse(first[0]) }
        var jobs = first
        var events = first.reduce(0) { $0 + $1.eventCount }
        let durable = first.contains { $0.durability == .durable }
        // Only a durable group gathers; arrivals needing less are fine in it.
        var gathering = durable ? gathering(after: first) : nil
        let recordedAt = max(EventTime.now, lastRecordedAt)
        let (startHead, committedTail) = (head, tail)
        let waiting: Int
        let started = ContinuousClock.now
        do {
            let (newHead, staged) = try environment.write(durable: durable) { transaction in
                // Runs again from the start after a map growth: stage everything taken so far, then gather on.
                let batch = LogWriteBatch(
                    transaction: transaction, schema: schema, head: startHead, committedTail: committedTail,
                    recordedAt: recordedAt)
                for job in jobs { try job.stage(in: batch) }
                while case let more = arrivals(
                    &gathering, eventBudget: limits.maximumEventsPerTransaction - events), !more.isEmpty
                {
                    jobs += more
                    events += more.reduce(0) { $0 + $1.eventCount }
                    for job in more { try job.stage(in: batch) }
                }
                return (batch.head, batch.staged)
            }
            waiting = waitingCount()
            let duration = recordCommit(jobs: jobs.count, since: started)
            // Answer first: the bookkeeping below only has to be done before this thread's next commit.
            notifier.publish(newHead)
            for job in jobs { job.succeed() }
            limits.commitObserver?(
                CommitReport(
                    appends: jobs.count, events: Int(newHead.rawValue - startHead.rawValue), duration: duration))
            head = newHead
            lastRecordedAt = recordedAt
            tail.append(contentsOf: staged)
            lastGroup = (jobs.count, waiting, duration)
        } catch {
            let failure =
                (error as? LMDBError).map(EventLogError.storage)
                ?? EventLogError(.storage, "the commit failed: \(error)")
            logger.error("log commit failed", metadata: ["jobs": "\(jobs.count)", "error": "\(failure.message)"])
            for job in jobs { job.fail(failure) }
        }
        // After answering: the callers need not wait for the index.
        if tail.eventCount >= limits.indexBatchSize || (durable && tail.streamCount >= limits.indexBatchStreams) {
            writeIndex(durable: durable)
        }
    }

    /// Stages `job` in a transaction that is then rolled back: it saw the state and the head a commit would have, and
    /// left nothing.
    private func rehearse(_ job: any WriteJob) {
        struct RolledBack: Error {}
        let (startHead, committedTail) = (head, tail)
        do {
            try environment.write(durable: false) { transaction in
                let batch = LogWriteBatch(
                    transaction: transaction, schema: schema, head: startHead, committedTail: committedTail,
                    recordedAt: max(EventTime.now, lastRecordedAt))
                try job.stage(in: batch)
                throw RolledBack()
            }
        } catch is RolledBack {
            job.succeed()
        } catch {
            job.fail((error as? LMDBError).map(EventLogError.storage) ?? EventLogError(.storage, "\(error)"))
        }
    }

    private func waitingCount() -> Int {
        condition.lock()
        defer { condition.unlock() }
        return queue.count
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
