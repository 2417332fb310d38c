import ChorusLog
import ChorusStorage
import Foundation
import Logging
import Synchronization

/// The one owner of write transactions: group commit on a dedicated thread.
///
/// Every job waiting when the writer starts a transaction goes into that one transaction, which commits (fsync'd)
/// once; then each job is answered. Positions are assigned inside the transaction, so commit order is position order.
/// fsync blocks, so this is a thread of its own rather than a task on the shared cooperative pool.
///
/// One exception (``Limits/callersCommitWhenAlone``, on unless configured off): an appender that finds no commit under
/// way, nothing queued, and the last group a lone one commits its job on its own thread. Handing one job to a sleeping
/// thread and being woken by it again cost two thread wake-ups per append, a large part of an fsync's time on some
/// machines; a lone appender is then nearly as fast as raw LMDB on any machine. Under concurrency the writer
/// thread does the work, so at most one caller's thread waits on an fsync at a time, and only while appends are rare.
final class LogWriter: @unchecked Sendable {
    struct Limits {
        var maximumEventsPerTransaction: Int
        var indexBatchSize: Int
        var indexBatchStreams: Int
        var commitObserver: (@Sendable (CommitReport) -> Void)?
        var callersCommitWhenAlone: Bool
    }

    private let environment: LMDBEnvironment
    private let schema: LogSchema
    private let notifier: PositionNotifier
    private let removals: StateRemovals
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
    /// Who is committing now, if anyone: only one at a time holds the write transaction and the state below.
    private var committer: Committer?
    private enum Committer { case writerThread, caller }
    /// Whether the last group was one job (a caller may then commit its own), and whether a caller's commit left an
    /// index write for the writer thread, with its durability.
    private var lastGroupWasLone = true
    private var indexWriteDue: Bool?
    /// Entered while ``run()``'s thread runs.
    private let running = DispatchGroup()

    // Touched only by the committer (``committer``; handed over under `condition`).
    private var head: LogPosition
    private var lastRecordedAt: EventTime
    /// Appended since the indexes were last written.
    private var tail: UnindexedTail
    /// What the last group commit tells about the next one: how many appenders it answered, how many others were
    /// already waiting when it finished, and how long it took.
    private var lastGroup = (jobs: 0, waiting: 0, duration: Duration.zero)

    private let commits = Atomic<Int>(0)
    private let callerCommits = Atomic<Int>(0)
    private let committedJobs = Atomic<Int>(0)
    private let commitNanoseconds = Atomic<Int>(0)
    private let indexedThrough: Atomic<UInt64>

    init(
        environment: LMDBEnvironment, schema: LogSchema, notifier: PositionNotifier, removals: StateRemovals,
        head: LogPosition, lastRecordedAt: EventTime, tail: UnindexedTail, limits: Limits, logger: Logger
    ) {
        self.environment = environment
        self.schema = schema
        self.notifier = notifier
        self.removals = removals
        self.head = head
        self.lastRecordedAt = lastRecordedAt
        self.tail = tail
        self.indexedThrough = Atomic(head.rawValue - UInt64(tail.eventCount))
        self.limits = limits
        self.logger = logger
    }

    /// Transactions committed (of them, by a lone appender on its own thread), jobs answered through them, time from
    /// transaction start to durable commit, and the position the indexes are written through, since the log opened;
    /// and the jobs queued now, waiting for a transaction.
    var statistics:
        (
            commits: Int, callerCommits: Int, jobs: Int, commitTime: Duration, indexedThrough: LogPosition,
            waiting: Int
        )
    {
        (
            commits.load(ordering: .relaxed), callerCommits.load(ordering: .relaxed),
            committedJobs.load(ordering: .relaxed),
            .nanoseconds(commitNanoseconds.load(ordering: .relaxed)),
            LogPosition(indexedThrough.load(ordering: .relaxed)),
            condition.withLock { queue.count }
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
                while let work = nextWork() {
                    switch work {
                    case .commit(let jobs):
                        let group = commit(startingWith: jobs, gathers: true)
                        if let durable = group.indexWriteDue {
                            // Answered first: the callers need not wait for the index.
                            answer(group)
                            writeIndex(durable: durable)
                            release()
                        } else {
                            // Handed on first: an appender answered now may then commit its next append itself.
                            release()
                            answer(group)
                        }
                    case .writeIndex(let durable):
                        writeIndex(durable: durable)
                        release()
                    }
                }
                if !tail.isEmpty { writeIndex(durable: true) }
                condition.withLock { state = .stopped }
                running.leave()
                continuation.resume()
            }
            thread.start()
        }
    }

    /// Queued until ``run()``'s thread takes it, or committed on the caller's thread when the writer is idle and the
    /// last group was a lone one (see the type's comment); refused once stopping.
    func submit(_ job: any WriteJob) throws(EventLogError) {
        condition.lock()
        guard state == .running || state == .idle else {
            condition.unlock()
            throw .closed
        }
        guard limits.callersCommitWhenAlone, state == .running, committer == nil, queue.isEmpty,
            indexWriteDue == nil, lastGroupWasLone
        else {
            queue.append(job)
            // A caller committing wakes the writer thread itself once done.
            if committer != .caller, queue.count == 1 || queue.count == gatherTarget { condition.signal() }
            condition.unlock()
            return
        }
        committer = .caller
        condition.unlock()
        if !job.rollsBack { callerCommits.add(1, ordering: .relaxed) }
        let group = commit(startingWith: [job], gathers: false)
        condition.lock()
        indexWriteDue = group.indexWriteDue
        committer = nil
        if !queue.isEmpty || indexWriteDue != nil || state != .running { condition.signal() }
        condition.unlock()
        answer(group)
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

    private enum Work {
        case commit([any WriteJob])
        case writeIndex(durable: Bool)
    }

    /// Waits until no caller is committing and there is work, then becomes the committer and takes it: what is queued,
    /// up to the transaction's event budget, or an index write a caller's commit left. Nil once stopping with nothing
    /// left.
    private func nextWork() -> Work? {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if committer == nil {
                // The index first, as after the writer thread's own commits: then it is written through where the
                // commit that made it due ended.
                if let durable = indexWriteDue {
                    committer = .writerThread
                    indexWriteDue = nil
                    return .writeIndex(durable: durable)
                }
                if !queue.isEmpty {
                    committer = .writerThread
                    return .commit(takeQueued(eventBudget: limits.maximumEventsPerTransaction))
                }
                if state != .running { return nil }
            }
            condition.wait()
        }
    }

    /// The writer thread's commit is done: a caller may commit next.
    private func release() {
        condition.lock()
        committer = nil
        condition.unlock()
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

    /// A group the committer has committed, or failed to, with the writer's state already advanced: ``answer(_:)``
    /// answers it, and may run after the committer has handed its role on.
    private struct CommittedGroup {
        var jobs: [any WriteJob] = []
        var failure: EventLogError?
        var report: CommitReport?
        /// The durability of the index write now due, if one is.
        var indexWriteDue: Bool?
    }

    private func answer(_ group: CommittedGroup) {
        if let failure = group.failure {
            for job in group.jobs { job.fail(failure) }
            return
        }
        for job in group.jobs { job.succeed() }
        if let report = group.report { limits.commitObserver?(report) }
    }

    /// Commits `first` and, when `gathers` (only the writer thread waits for arrivals), the jobs gathered after it;
    /// returns them to be answered.
    private func commit(startingWith first: [any WriteJob], gathers: Bool) -> CommittedGroup {
        if first.count == 1, first[0].rollsBack {
            rehearse(first[0])
            return CommittedGroup()
        }
        var jobs = first
        var events = first.reduce(0) { $0 + $1.eventCount }
        let durable = first.contains { $0.durability == .durable }
        // Only a durable group gathers; arrivals needing less are fine in it.
        var gathering = durable && gathers ? gathering(after: first) : nil
        let recordedAt = max(EventTime.now, lastRecordedAt)
        let startHead = head
        let started = ContinuousClock.now
        var group = CommittedGroup()
        do {
            let (newHead, removedFrom) = try writeBatch(durable: durable, recordedAt: recordedAt) { batch in
                // Runs again from the start after a map growth: stage everything taken so far, then gather on.
                for job in jobs { try job.stage(in: batch) }
                while case let more = arrivals(
                    &gathering, eventBudget: limits.maximumEventsPerTransaction - events), !more.isEmpty
                {
                    jobs += more
                    events += more.reduce(0) { $0 + $1.eventCount }
                    for job in more { try job.stage(in: batch) }
                }
            }
            let waiting = waitingCount(afterGroupOf: jobs.count)
            let duration = recordCommit(jobs: jobs.count, since: started)
            head = newHead
            lastRecordedAt = recordedAt
            // The indexes reach the head but for the tail: an import's prepared batch writes its index with its events.
            indexedThrough.store(head.rawValue - UInt64(tail.eventCount), ordering: .relaxed)
            lastGroup = (jobs.count, waiting, duration)
            // Before the head: whoever learns of it must find these too.
            removals.record(removedFrom, at: newHead)
            // Published by the committer, so that the head only ever moves forward.
            notifier.publish(newHead)
            group.report = CommitReport(
                appends: jobs.count, events: Int(newHead.rawValue - startHead.rawValue), duration: duration)
        } catch {
            let failure =
                (error as? LMDBError).map(EventLogError.storage)
                ?? EventLogError(.storage, "the commit failed: \(error)")
            logger.error("log commit failed", metadata: ["jobs": "\(jobs.count)", "error": "\(failure.message)"])
            group.failure = failure
        }
        group.jobs = jobs
        let indexDue =
            tail.eventCount >= limits.indexBatchSize || (durable && tail.streamCount >= limits.indexBatchStreams)
        group.indexWriteDue = indexDue ? durable : nil
        return group
    }

    /// Runs `body` on a batch in one write transaction and commits it; returns the head after it, and the state tables
    /// it removed keys from. The batch records its appends in the writer's tail as they are staged; if the transaction
    /// does not commit, the tail is rolled back to where it was (also before `body` runs again after a map growth).
    private func writeBatch(
        durable: Bool, recordedAt: EventTime, _ body: (LogWriteBatch) throws -> Void
    ) throws -> (head: LogPosition, removedFrom: Set<StateTable>) {
        let startHead = head
        var newHead = startHead
        var removedFrom: Set<StateTable> = []
        let mark = tail.mark()
        do {
            try environment.write(durable: durable) { transaction in
                tail.rollBack(to: mark)
                let batch = LogWriteBatch(
                    environment: environment, transaction: transaction, schema: schema, head: startHead,
                    tail: tail.take(),
                    recordedAt: recordedAt)
                defer { tail = batch.takeTail() }
                try body(batch)
                newHead = batch.head
                removedFrom = batch.removedFrom
            }
        } catch {
            tail.rollBack(to: mark)
            throw error
        }
        return (newHead, removedFrom)
    }

    /// Stages `job` in a transaction that is then rolled back: it saw the state and the head a commit would have, and
    /// left nothing.
    private func rehearse(_ job: any WriteJob) {
        struct RolledBack: Error {}
        do {
            _ = try writeBatch(durable: false, recordedAt: max(EventTime.now, lastRecordedAt)) { batch in
                try job.stage(in: batch)
                throw RolledBack()
            }
        } catch is RolledBack {
            job.succeed()
        } catch {
            job.fail((error as? LMDBError).map(EventLogError.storage) ?? EventLogError(.storage, "\(error)"))
        }
    }

    /// How many jobs wait now, after a group of `jobs`; notes whether that group was a lone one.
    private func waitingCount(afterGroupOf jobs: Int) -> Int {
        condition.lock()
        defer { condition.unlock() }
        lastGroupWasLone = jobs == 1 && queue.isEmpty
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
