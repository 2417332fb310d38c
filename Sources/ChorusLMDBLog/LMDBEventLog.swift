import ChorusLog
import ChorusStorage
import Foundation
import Logging

/// The embedded event log: one LMDB environment in one directory, with the decision state in its own tables.
///
/// Appends are group-committed by one writer, which runs while ``run()`` runs (a server's service group runs it; tools
/// and tests call ``withWriter(_:)``), and return only once durable. Positions start at 1, are gapless, and commit
/// order is position order, so a reader can never see position N+1 before N.
public final class LMDBEventLog: EventLog {
    /// The directory holding the LMDB files.
    public let directory: String
    let environment: LMDBEnvironment
    let schema: LogSchema
    let notifier: PositionNotifier
    /// Nil when read-only.
    private let writer: LogWriter?
    /// Recorded by the writer: nil when another process writes.
    private let removals: StateRemovals?
    /// Held for as long as this process may write the log.
    private let writerLock: DirectoryLock?

    /// Opens (creating if needed) the log in `directory`, ready for its writer to ``run()``; or, with
    /// ``Configuration/readOnly``, opens an existing log for reading beside the process that writes it.
    public init(
        directory: String,
        configuration: Configuration = Configuration(),
        logger: Logger = Logger(label: "chorus.log")
    ) throws {
        self.directory = directory
        do {
            if configuration.readOnly {
                writerLock = nil
            } else {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                guard
                    let lock = try DirectoryLock(
                        directory: directory, name: Self.writerLockName, patience: Self.writerLockPatience)
                else {
                    throw EventLogError.locked(directory)
                }
                writerLock = lock
            }
            environment = try LMDBEnvironment(
                path: directory, configuration: configuration.environment,
                databases: LogSchema.databaseNames(stateTables: configuration.stateTables).map { .init(name: $0) },
                logger: logger)
            guard LogSchema.isCreated(in: environment) else {
                environment.close()
                throw EventLogError(
                    .storage,
                    "\(directory) holds no log: the write that was to create it never finished (a full disk?); "
                        + "delete the directory, or open it for writing to create the log")
            }
            schema = LogSchema(environment, stateTables: configuration.stateTables)
            if let older = try schema.checkStorageFormat(environment) {
                logger.notice(
                    "log storage brought to this build's format",
                    metadata: ["path": "\(directory)", "from": "\(older)", "to": "\(LogSchema.storageFormat)"])
            }
        } catch let error as EventLogError {
            throw error
        } catch let error as LMDBError {
            throw EventLogError.storage(error)
        } catch {
            throw EventLogError(.storage, "cannot open the log in \(directory): \(error)")
        }
        let last = try Self.lastEvent(environment: environment, schema: schema)
        let head = last?.position ?? .start
        notifier = PositionNotifier(head: head)
        if configuration.readOnly {
            writer = nil
            removals = nil
        } else {
            // What was appended after the indexes were last written (up to one index batch, or more after a crash).
            let index = LogIndex(schema: schema)
            let tail: UnindexedTail
            do {
                tail = try environment.read { try index.unindexedTail(in: $0) }
            } catch let error as LMDBError {
                throw EventLogError.storage(error)
            }
            let removals = StateRemovals(openedAt: head)
            let writer = LogWriter(
                environment: environment, schema: schema, notifier: notifier, removals: removals, head: head,
                lastRecordedAt: last?.recordedAt ?? EventTime(millisecondsSince1970: 0), tail: tail,
                limits: .init(
                    maximumEventsPerTransaction: configuration.maximumEventsPerTransaction,
                    indexBatchSize: configuration.indexBatchSize,
                    indexBatchStreams: configuration.indexBatchStreams, commitObserver: configuration.commitObserver,
                    callersCommitWhenAlone: configuration.callersCommitWhenAlone),
                logger: logger)
            self.writer = writer
            self.removals = removals
        }
    }

    deinit {
        close()
    }

    /// Commits what is already submitted, ends every subscription, and closes the files; later calls fail with
    /// ``EventLogError/Code/closed``. Another process (or this one) may then open the log for writing.
    public func close() {
        writer?.stop()
        notifier.close()
        environment.close()
        writerLock?.release()
    }

    /// Runs the writer until the task is cancelled or the log closes: group commits on a thread of its own, with the
    /// data file's headroom prepared beside them. Appends submitted before it starts wait for it. Once it returns,
    /// everything submitted is committed and indexed, and appends fail with ``EventLogError/Code/closed``. Returns at
    /// once for a read-only log.
    public func run() async {
        guard let writer else { return }
        await withDiscardingTaskGroup { group in
            group.addTask { await self.environment.prepareFileSpace() }
            await withTaskCancellationHandler {
                await writer.run()
            } onCancel: {
                writer.requestStop()
            }
            environment.stopPreparingFileSpace()
        }
    }

    /// Runs `body` while the writer runs (``run()``), then stops the writer once what `body` appended is committed:
    /// for tools and tests, which append without a service group.
    public func withWriter<R>(
        isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> R
    ) async throws -> R {
        try await withThrowingTaskGroup(of: Void.self, returning: R.self, isolation: isolation) { group in
            group.addTask { await self.run() }
            defer { group.cancelAll() }
            return try await body()
        }
    }

    /// Whether another process (a server) has the log in `directory` open for writing now.
    public static func isOpenForWriting(directory: String) -> Bool {
        do {
            guard let lock = try DirectoryLock(directory: directory, name: Self.writerLockName) else { return true }
            lock.release()
            return false
        } catch {
            return false
        }
    }

    private static let writerLockName = "writer.lock"
    /// How long opening for writing waits for a lock another process holds: long enough for one just let go (see
    /// `DirectoryLock`), short enough that a second writer is refused without a wait anyone notices.
    private static let writerLockPatience = Duration.milliseconds(500)

    /// Whether this process only reads the log.
    public var isReadOnly: Bool { writer == nil }

    public var head: LogPosition {
        guard isReadOnly else { return notifier.head }
        return (try? Self.lastEvent(environment: environment, schema: schema))??.position ?? .start
    }

    /// Forces everything committed so far to disk; ends a bulk import.
    public func syncToDisk() throws {
        do { try environment.sync() } catch let error as LMDBError { throw EventLogError.storage(error) }
    }

    /// Writes a consistent, compacted copy of the log (events, indexes and the state tables) as of one moment into
    /// `directory`, which must exist and be empty; appends go on meanwhile. The copy opens as a log like any other.
    public func copyCompacted(to directory: String) throws {
        do { try environment.copyCompacted(to: directory) } catch let error as LMDBError {
            throw EventLogError.storage(error)
        }
    }

    /// Figures for monitoring and benchmarks.
    public var statistics: EventLogStatistics {
        let writes =
            writer?.statistics
            ?? (commits: 0, callerCommits: 0, jobs: 0, commitTime: .zero, indexedThrough: .start, waiting: 0)
        return EventLogStatistics(
            head: head, commits: writes.commits, commitsOnCallerThread: writes.callerCommits,
            committedAppends: writes.jobs, commitTime: writes.commitTime,
            indexedThrough: writes.indexedThrough, waitingAppends: writes.waiting, mapSize: environment.mapSize,
            mapGrowths: environment.mapGrowthCount)
    }

    /// Runs `body` in one read transaction on the state tables; ``StateReader/position`` is the last event that same
    /// transaction sees, so the state is exactly the log folded through it.
    public func readState<R>(_ body: (any StateReader) throws -> R) throws -> R {
        try withReadTransaction { try body(LMDBStateReader(log: self, transaction: $0)) }
    }

    public func newestRemoval(from table: StateTable) -> LogPosition? {
        removals?.newest(in: table)
    }

    public func waitForHead(after position: LogPosition) async throws -> LogPosition {
        guard isReadOnly else { return try await notifier.waitForHead(after: position) }
        // Another process writes: look every 50 ms, until the log closes.
        while true {
            let head = self.head
            if head > position { return head }
            _ = try await notifier.waitForHead(after: notifier.head, until: .now + .milliseconds(50))
        }
    }

    public func read(from position: LogPosition, limit: Int) throws -> [RecordedEvent] {
        try read(from: position, direction: .forward, limit: limit)
    }

    /// Runs `decide` inside the writer's next transaction, with whatever else is committed in that group, and returns
    /// its result once the transaction has committed. An ``LMDBError`` it meets fails the whole group; after a map
    /// growth it runs again from the start.
    public func append<Output: Sendable>(
        _ durability: WriteDurability, eventCount: Int,
        decide: @escaping @Sendable (any DecisionBatch) throws -> Output
    ) async throws -> Output {
        guard let writer else { throw EventLogError.readOnly }
        return try await withUnsafeThrowingContinuation { continuation in
            let job = ContinuationWriteJob(
                durability: durability, eventCount: eventCount, body: decide, continuation: continuation)
            do {
                try writer.submit(job)
            } catch {
                continuation.resume(throwing: error)
            }
        }
    }

    /// Runs `body` as the writer's next transaction would, alone, then rolls that transaction back: `body` reads the
    /// decision state and the head a write would, appends as it would, and nothing it wrote stays. A replica of a log
    /// kept elsewhere decides this way, sends what was decided to be committed there, and applies it once it is.
    public func rehearse<Output: Sendable>(
        eventCount: Int, _ body: @escaping @Sendable (any DecisionBatch) throws -> Output
    ) async throws -> Output {
        guard let writer else { throw EventLogError.readOnly }
        return try await withUnsafeThrowingContinuation { continuation in
            let job = ContinuationWriteJob(
                durability: .nonDurableBulkImport, eventCount: eventCount, rollsBack: true, body: body,
                continuation: continuation)
            do {
                try writer.submit(job)
            } catch {
                continuation.resume(throwing: error)
            }
        }
    }

    private static func lastEvent(environment: LMDBEnvironment, schema: LogSchema) throws -> RecordedEvent? {
        do {
            return try environment.read { transaction in
                try transaction.withEventCursor(schema) { try $0.last().map(EventCursor.decode) }
            }
        } catch let error as LMDBError {
            throw EventLogError.storage(error)
        }
    }
}

extension LMDBEventLog {
    /// The bytes the log stores for `event` appended to `stream` by `actor`: its key in the events table and its
    /// record. `chorus bench log`'s raw LMDB baseline stores exactly these: where LMDB places a commit's pages, and so
    /// how many separate writes its sync waits for, changes with a few bytes more or less per value.
    package static func storedSize(of event: NewEvent, stream: StreamID, actor: String) -> (key: Int, record: Int) {
        let fields = EventRecordCodec.Fields(
            position: 1, streamVersion: 1, recordedAt: .now, commandID: CommandID(), correlationID: CorrelationID(),
            stream: stream, actor: actor, event: event)
        return (LogSchema.eventKeySize, EventRecordCodec.encodedSize(fields))
    }
}

/// What the log has done since it opened, and how big its map is.
public struct EventLogStatistics: Sendable {
    public let head: LogPosition
    /// Write transactions committed since the log opened.
    public let commits: Int
    /// Of those, the ones a lone appender committed on its own thread, the writer thread being idle.
    public let commitsOnCallerThread: Int
    /// Appends (or bulk-import calls) answered through those commits; divided by `commits`, the mean group size.
    public let committedAppends: Int
    /// Time spent in append transactions, from begin to durable commit.
    public let commitTime: Duration
    /// The stream and command indexes are written through here; later appends are indexed in the writer's memory.
    public let indexedThrough: LogPosition
    /// Appends queued for the writer now, not yet in a transaction.
    public let waitingAppends: Int
    public let mapSize: Int
    /// Times the map grew since the log opened.
    public let mapGrowths: Int
}
