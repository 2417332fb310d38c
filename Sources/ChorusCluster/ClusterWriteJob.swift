import ChorusLog

/// An append waiting for the cluster writer: decided (perhaps more than once) in the writer's rehearsals, answered
/// once its commit is applied to the replica.
protocol ClusterWriteJob: AnyObject, Sendable {
    var eventCount: Int { get }
    /// Runs the decision; its answer or refusal is kept for ``succeed()``.
    func stage(in batch: any DecisionBatch)
    func succeed()
    func fail(_ error: any Error)
}

/// Answers an awaiting caller. Staged and answered by the writer only, one at a time: never shared.
final class ClusterContinuationJob<Output: Sendable>: ClusterWriteJob, @unchecked Sendable {
    let eventCount: Int
    private let decide: @Sendable (any DecisionBatch) throws -> Output
    private let continuation: UnsafeContinuation<Output, any Error>
    private var staged: Result<Output, any Error>?

    init(
        eventCount: Int, decide: @escaping @Sendable (any DecisionBatch) throws -> Output,
        continuation: UnsafeContinuation<Output, any Error>
    ) {
        self.eventCount = eventCount
        self.decide = decide
        self.continuation = continuation
    }

    func stage(in batch: any DecisionBatch) {
        staged = Result { try decide(batch) }
    }

    func succeed() {
        continuation.resume(with: staged ?? .failure(EventLogError(.storage, "an append was answered undecided")))
    }

    func fail(_ error: any Error) {
        continuation.resume(throwing: error)
    }
}
