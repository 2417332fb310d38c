import ChorusLog
import ChorusStorage

/// Work the log writer runs inside its write transaction, answered once the transaction has committed.
protocol WriteJob: AnyObject, Sendable {
    var durability: WriteDurability { get }
    /// About how many events the job appends, to keep one transaction a sensible size.
    var eventCount: Int { get }
    /// A rehearsal: staged alone in a transaction that is rolled back (``LMDBEventLog/rehearse(eventCount:_:)``).
    var rollsBack: Bool { get }

    /// Runs inside the transaction; may run again from the start if the map had to grow. A failure of this job alone
    /// is kept for ``succeed()``; a thrown ``LMDBError`` aborts the whole batch.
    func stage(in batch: LogWriteBatch) throws(LMDBError)

    /// The batch committed: answer with what ``stage(in:)`` produced.
    func succeed()

    /// The batch did not commit: nothing of this job was written.
    func fail(_ error: EventLogError)
}

/// A job that answers an awaiting caller through a continuation. The writer answers every job exactly once (succeed
/// after a commit, fail otherwise), so the unchecked continuation is safe, and cheaper on the append path.
final class ContinuationWriteJob<Output: Sendable>: WriteJob, @unchecked Sendable {
    let durability: WriteDurability
    let eventCount: Int
    let rollsBack: Bool
    private let body: @Sendable (any DecisionBatch) throws -> Output
    private let continuation: UnsafeContinuation<Output, any Error>
    // Written by the writer thread in stage, read by it in succeed: never shared.
    private var staged: Result<Output, any Error>?

    init(
        durability: WriteDurability,
        eventCount: Int,
        rollsBack: Bool = false,
        body: @escaping @Sendable (any DecisionBatch) throws -> Output,
        continuation: UnsafeContinuation<Output, any Error>
    ) {
        self.durability = durability
        self.eventCount = eventCount
        self.rollsBack = rollsBack
        self.body = body
        self.continuation = continuation
    }

    func stage(in batch: LogWriteBatch) throws(LMDBError) {
        do {
            staged = .success(try body(batch))
        } catch let error as LMDBError {
            throw error
        } catch {
            staged = .failure(error)
        }
    }

    func succeed() {
        continuation.resume(with: staged ?? .failure(EventLogError(.storage, "job committed without being staged")))
    }

    func fail(_ error: EventLogError) {
        continuation.resume(throwing: error)
    }
}
