import Foundation
import Logging
import Synchronization

/// The one owner of write transactions: group commit on a dedicated thread.
///
/// Every job waiting when the writer starts a transaction goes into that one transaction, which commits (fsync'd)
/// once; then each job is answered. Positions are assigned inside the transaction, so commit order is position order.
/// fsync blocks, so this is a thread of its own rather than a task on the shared cooperative pool.
final class LogWriter: @unchecked Sendable {
    private let environment: LMDBEnvironment
    private let schema: LogSchema
    private let notifier: HeadNotifier
    private let maximumJobsPerTransaction: Int
    private let logger: Logger

    // Guarded by `condition`.
    private let condition = NSCondition()
    private var queue: [any WriteJob] = []
    private var state = State.idle
    private enum State { case idle, running, stopping, stopped }
    private let finished = DispatchSemaphore(value: 0)

    // Touched only by the writer thread.
    private var head: LogPosition
    private var lastRecordedAt: EventTime

    private let commits = Atomic<Int>(0)
    private let committedJobs = Atomic<Int>(0)

    init(
        environment: LMDBEnvironment, schema: LogSchema, notifier: HeadNotifier, head: LogPosition,
        lastRecordedAt: EventTime, maximumJobsPerTransaction: Int, logger: Logger
    ) {
        self.environment = environment
        self.schema = schema
        self.notifier = notifier
        self.head = head
        self.lastRecordedAt = lastRecordedAt
        self.maximumJobsPerTransaction = maximumJobsPerTransaction
        self.logger = logger
    }

    /// Transactions committed and jobs answered through them, since the log opened.
    var statistics: (commits: Int, jobs: Int) {
        (commits.load(ordering: .relaxed), committedJobs.load(ordering: .relaxed))
    }

    func start() {
        condition.lock()
        defer { condition.unlock() }
        guard state == .idle else { return }
        state = .running
        let thread = Thread { [self] in
            while let jobs = nextJobs() { commit(jobs) }
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
        if queue.count == 1 { condition.signal() }
    }

    /// Commits every job already submitted, refuses new ones, and waits for the thread to end.
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

    /// Waits for work; nil once stopping with nothing left.
    private func nextJobs() -> [any WriteJob]? {
        condition.lock()
        defer { condition.unlock() }
        while queue.isEmpty && state == .running { condition.wait() }
        guard !queue.isEmpty else { return nil }
        if queue.count <= maximumJobsPerTransaction {
            defer { queue.removeAll(keepingCapacity: true) }
            return queue
        }
        defer { queue.removeFirst(maximumJobsPerTransaction) }
        return Array(queue.prefix(maximumJobsPerTransaction))
    }

    private func commit(_ jobs: [any WriteJob]) {
        let durable = jobs.contains { $0.durability == .durable }
        let recordedAt = max(EventTime.now, lastRecordedAt)
        let startHead = head
        do {
            let newHead = try environment.write(durable: durable) { transaction in
                let batch = LogWriteBatch(
                    transaction: transaction, schema: schema, head: startHead, recordedAt: recordedAt)
                for job in jobs { try job.stage(in: batch) }
                return batch.head
            }
            head = newHead
            lastRecordedAt = recordedAt
            commits.add(1, ordering: .relaxed)
            committedJobs.add(jobs.count, ordering: .relaxed)
            notifier.publish(newHead)
            for job in jobs { job.succeed() }
        } catch {
            let failure =
                (error as? LMDBError).map(EventLogError.storage)
                ?? EventLogError(.storage, "the commit failed: \(error)")
            logger.error("log commit failed", metadata: ["jobs": "\(jobs.count)", "error": "\(failure.message)"])
            for job in jobs { job.fail(failure) }
        }
    }
}
