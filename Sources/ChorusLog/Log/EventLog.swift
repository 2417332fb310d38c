import Foundation
import Logging

/// The ordered, durable event log: one LMDB environment in one directory.
///
/// Appends are group-committed by one writer thread and return only once durable. Positions start at 1, are gapless,
/// and commit order is position order, so a reader can never see position N+1 before N.
public final class EventLog: Sendable {
    /// The directory holding the LMDB files.
    public let directory: String
    let environment: LMDBEnvironment
    let schema: LogSchema
    let notifier: PositionNotifier
    /// Nil when read-only.
    private let writer: LogWriter?
    /// Held for as long as this process may write the log.
    private let writerLock: DirectoryLock?

    /// Opens (creating if needed) the log in `directory` and starts its writer; or, with
    /// ``EventLogConfiguration/readOnly``, opens an existing log for reading beside the process that writes it.
    public init(
        directory: String,
        configuration: EventLogConfiguration = EventLogConfiguration(),
        logger: Logger = Logger(label: "chorus.log")
    ) throws {
        self.directory = directory
        do {
            if configuration.readOnly {
                writerLock = nil
            } else {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                guard let lock = try DirectoryLock(directory: directory, name: Self.writerLockName) else {
                    throw EventLogError.locked(directory)
                }
                writerLock = lock
            }
            environment = try LMDBEnvironment(
                path: directory, configuration: configuration.environment,
                databases: (LogSchema.databaseNames + configuration.stateTables.map(Self.stateDatabaseName)).map { .init(name: $0) },
                logger: logger)
            schema = LogSchema(environment)
            try schema.checkStorageFormat(environment)
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
        } else {
            // What was appended after the indexes were last written (up to one index batch, or more after a crash).
            let index = LogIndex(schema: schema)
            let tail: UnindexedTail
            do {
                tail = try environment.read { try index.unindexedTail(in: $0) }
            } catch let error as LMDBError {
                throw EventLogError.storage(error)
            }
            let writer = LogWriter(
                environment: environment, schema: schema, notifier: notifier, head: head,
                lastRecordedAt: last?.recordedAt ?? EventTime(millisecondsSince1970: 0), tail: tail,
                limits: .init(
                    maximumEventsPerTransaction: configuration.maximumEventsPerTransaction,
                    indexBatchSize: configuration.indexBatchSize,
                    indexBatchStreams: configuration.indexBatchStreams, commitObserver: configuration.commitObserver),
                logger: logger)
            writer.start()
            self.writer = writer
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

    /// Whether this process only reads the log.
    public var isReadOnly: Bool { writer == nil }

    /// The position of the last committed event; ``LogPosition/start`` for an empty log.
    public var head: LogPosition {
        guard isReadOnly else { return notifier.head }
        return (try? Self.lastEvent(environment: environment, schema: schema))??.position ?? .start
    }

    /// Appends durably: returns once the commit holding the events is fsync'd.
    ///
    /// - Throws: ``EventLogError`` with ``EventLogError/Code/wrongExpectedVersion`` or
    ///   ``EventLogError/Code/invalidAppend`` (nothing appended), ``EventLogError/Code/storage``, or
    ///   ``EventLogError/Code/closed``.
    public func append(_ request: AppendRequest) async throws -> AppendOutcome {
        try request.validate()
        return try await perform(.durable, eventCount: request.events.count) { batch in
            try batch.append(request, validated: true)
        }
    }

    /// Appends many requests without waiting for an fsync: for bulk import only. Each request succeeds or fails
    /// alone. Call ``syncToDisk()`` when the import is done; until then a crash may lose what was imported.
    public func appendNonDurableBulkImport(_ requests: [AppendRequest]) async throws -> [Result<
        AppendOutcome, EventLogError
    >] {
        try await perform(.nonDurableBulkImport, eventCount: requests.reduce(0) { $0 + $1.events.count }) { batch in
            try requests.map { request in
                do {
                    return .success(try batch.append(request))
                } catch let error as EventLogError {
                    return .failure(error)
                }
            }
        }
    }

    /// Forces everything committed so far to disk; ends a bulk import.
    public func syncToDisk() throws {
        do { try environment.sync() } catch let error as LMDBError { throw EventLogError.storage(error) }
    }

    /// Writes a consistent, compacted copy of the log (events, indexes and the state tables) as of one moment into
    /// `directory`, which must exist and be empty; appends go on meanwhile. The copy opens as a log like any other.
    public func copyCompacted(to directory: String) throws {
        do { try environment.copyCompacted(to: directory) } catch let error as LMDBError { throw EventLogError.storage(error) }
    }

    /// Figures for monitoring and benchmarks.
    public var statistics: EventLogStatistics {
        let writes = writer?.statistics ?? (commits: 0, jobs: 0, commitTime: .zero, indexedThrough: .start)
        return EventLogStatistics(
            head: head, commits: writes.commits, committedAppends: writes.jobs, commitTime: writes.commitTime,
            indexedThrough: writes.indexedThrough, mapSize: environment.mapSize,
            mapGrowths: environment.mapGrowthCount)
    }

    /// The state table opened under `name` (see ``EventLogConfiguration/stateTables``).
    public func stateTable(_ name: String) -> StoreTable {
        StoreTable(database: environment.database(Self.stateDatabaseName(name)))
    }

    /// Runs `body` in a read transaction on the state tables (and nothing else of the log).
    public func readState<R>(_ body: (StoreTransaction) throws -> R) throws -> R {
        try withReadTransaction { try body(StoreTransaction($0)) }
    }

    /// Runs `body` in one read transaction on the state tables, with the position of the last event that same
    /// transaction sees: the state is exactly the log folded through it.
    public func readState<R>(withHead body: (StoreTransaction, LogPosition) throws -> R) throws -> R {
        try withReadTransaction { transaction in
            let head = try transaction.withEventCursor(schema) { try $0.last()?.position } ?? .start
            return try body(StoreTransaction(transaction), head)
        }
    }

    private static func stateDatabaseName(_ name: String) -> String { "state." + name }

    /// Runs `body` inside the writer's next transaction, with whatever else is committed in that group, and returns
    /// its result once the transaction has committed (durably, unless `durability` says otherwise).
    ///
    /// `body` decides: it reads state, appends (``LogWriteBatch/append(_:)``) and writes state. An error it throws
    /// fails this call alone, so it must throw before its first write; an ``LMDBError`` fails the whole group. After
    /// a map growth `body` runs again from the start.
    public func perform<Output: Sendable>(
        _ durability: WriteDurability = .durable,
        eventCount: Int = 1,
        _ body: @escaping @Sendable (LogWriteBatch) throws -> Output
    ) async throws -> Output {
        guard let writer else { throw EventLogError.readOnly }
        return try await withUnsafeThrowingContinuation { continuation in
            let job = ContinuationWriteJob(
                durability: durability, eventCount: eventCount, body: body, continuation: continuation)
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

/// What the log has done since it opened, and how big its map is.
public struct EventLogStatistics: Sendable {
    public let head: LogPosition
    /// Write transactions committed since the log opened.
    public let commits: Int
    /// Appends (or bulk-import calls) answered through those commits; divided by `commits`, the mean group size.
    public let committedAppends: Int
    /// Time spent in append transactions, from begin to durable commit.
    public let commitTime: Duration
    /// The stream and command indexes are written through here; later appends are indexed in the writer's memory.
    public let indexedThrough: LogPosition
    public let mapSize: Int
    /// Times the map grew since the log opened.
    public let mapGrowths: Int
}
