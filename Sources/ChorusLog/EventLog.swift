/// The event log as everything above it uses it: the domain appends decided batches, the projections and live streams
/// read from a position and wait for the head to move, the tools read and replay.
///
/// Whatever implements it keeps the log's promises: positions start at 1 and are gapless, commit order is position
/// order (a reader never sees N + 1 before N), an append answered is durable, and a decision is made against the
/// state of exactly the events before it. `LMDBEventLog` (`ChorusLMDBLog`) is the embedded implementation. A log
/// shared by several machines implements the same requirements: each machine reads and waits on a local replica of
/// the log, and a decision runs against that replica's state and commits only if what it read is still so
/// (docs/ARCHITECTURE.md, "The log seam").
public protocol EventLog: AnyObject, Sendable {
    /// The position of the last committed event; ``LogPosition/start`` for an empty log.
    var head: LogPosition { get }

    /// Up to `limit` events from `position` (inclusive), oldest first.
    func read(from position: LogPosition, limit: Int) throws -> [RecordedEvent]

    /// Up to `limit` events of `stream`, newest first, from its version `version` down (from its newest when nil):
    /// one aggregate's history through the stream index, for the tools that look one up.
    func readStreamBackward(_ stream: StreamID, from version: UInt64?, limit: Int) throws -> [RecordedEvent]

    /// Calls `body` with every event from `position` through `last` (the head when nil), in order: a whole range, for
    /// replays and exports. An implementation may stream it; the default reads `chunkSize` events at a time.
    func scan(
        from position: LogPosition, through last: LogPosition?, chunkSize: Int, _ body: (RecordedEvent) throws -> Void
    ) throws

    /// Returns the head once it is past `position`; throws `CancellationError`, or ``EventLogError/Code/closed`` once
    /// the log closes.
    func waitForHead(after position: LogPosition) async throws -> LogPosition

    /// Appends a decided batch: runs `decide` inside the log's next write, where it reads the decision state and
    /// appends the events it decides, and returns what `decide` returned once they are committed (durably, unless
    /// `durability` says otherwise). An error `decide` throws refuses it alone: it must throw before its first append
    /// or state change, and nothing of it is written. `decide` may run more than once (after the storage grew, or when
    /// another machine's write came first), so it must keep its effects inside the batch. `eventCount` is about how
    /// many events it appends, to keep one write a sensible size.
    func append<Output: Sendable>(
        _ durability: WriteDurability, eventCount: Int, decide: @escaping @Sendable (any DecisionBatch) throws -> Output
    ) async throws -> Output

    /// Runs `body` on the decision state as one committed position of the log left it (sessions, e-mails): for reads
    /// outside any append.
    func readState<R>(_ body: (any StateReader) throws -> R) throws -> R

    /// The newest position at which a committed write removed a key from `table`, as far as this process can know:
    /// what a ``readState(_:)`` at that ``StateReader/position`` or later found in `table` is still there, for a table
    /// whose values are never replaced in place. Nil when it cannot know (another process writes the log).
    func newestRemoval(from table: StateTable) -> LogPosition?

    /// Makes durable everything committed so far, such as a bulk import's non-durable appends.
    func syncToDisk() throws
}

extension EventLog {
    /// Appends `request` durably: returns once the commit holding its events is durable.
    ///
    /// - Throws: ``EventLogError`` with ``EventLogError/Code/wrongExpectedVersion`` or
    ///   ``EventLogError/Code/invalidAppend`` (nothing appended), ``EventLogError/Code/storage``, or
    ///   ``EventLogError/Code/closed``.
    public func append(_ request: AppendRequest) async throws -> AppendOutcome {
        try request.validate()
        return try await append(.durable, eventCount: request.events.count) { batch in try batch.append(request) }
    }

    /// Appends many requests in one write without waiting for it to be durable: for bulk import only. Each request
    /// succeeds or fails alone. Call ``syncToDisk()`` when the import is done; until then a crash may lose it.
    public func appendNonDurableBulkImport(_ requests: [AppendRequest]) async throws -> [Result<
        AppendOutcome, EventLogError
    >] {
        try await append(.nonDurableBulkImport, eventCount: requests.reduce(0) { $0 + $1.events.count }) { batch in
            // Only the log's refusals are answered per request; a failure of the storage fails the whole write.
            try requests.map { request in
                do {
                    return .success(try batch.append(request))
                } catch let error as EventLogError {
                    return .failure(error)
                }
            }
        }
    }

    /// The event at `position`, if the log holds one there.
    public func event(at position: LogPosition) throws -> RecordedEvent? {
        try read(from: position, limit: 1).first.flatMap { $0.position == position ? $0 : nil }
    }

    /// Every event after `position`, in order: first those already in the log, then each new one as it commits.
    /// Nothing is missed and nothing repeats at the seam, because it always reads from the log itself. The sequence
    /// ends when the task is cancelled or the log closes.
    public func subscribe(after position: LogPosition = .start, batchSize: Int = 512) -> LogSubscription {
        LogSubscription(log: self, after: position, batchSize: batchSize)
    }

    /// Every event from position 1 through the head, in order.
    public func scan(_ body: (RecordedEvent) throws -> Void) throws {
        try scan(from: 1, through: nil, chunkSize: 8192, body)
    }

    /// Every event from `position` through `last` (the head when nil), in order.
    public func scan(
        from position: LogPosition, through last: LogPosition? = nil, _ body: (RecordedEvent) throws -> Void
    ) throws {
        try scan(from: position, through: last, chunkSize: 8192, body)
    }

    /// Reads `chunkSize` events at a time, so that a long scan never holds the whole log.
    public func scan(
        from position: LogPosition, through last: LogPosition?, chunkSize: Int, _ body: (RecordedEvent) throws -> Void
    ) throws {
        let end = last ?? head
        var next = max(position, 1)
        while next <= end {
            let chunk = try read(from: next, limit: min(chunkSize, Int(clamping: end.rawValue - next.rawValue + 1)))
            guard let newest = chunk.last else { return }
            for event in chunk { try body(event) }
            next = newest.position.next
        }
    }
}
