import Synchronization

/// The log seam in memory, nothing like LMDB: for tests, a program's own among them, of code written against
/// ``EventLog``, and for this package's proof that the domain and the read models use the log through it alone. Keeps
/// the log's promises but durability: positions from 1 without gaps, expected versions, command ids, the decision
/// state. Not durable; one decision at a time.
public final class InMemoryEventLog: EventLog {
    private struct Contents {
        var events: [RecordedEvent] = []
        var state: [String: [[UInt8]: [UInt8]]] = [:]
        var streamVersions: [StreamID: UInt64] = [:]
        var commands: [CommandID: AppendOutcome] = [:]
        var waiting: [UInt64: (after: LogPosition, continuation: CheckedContinuation<LogPosition, any Error>)] = [:]
        var nextWaiter: UInt64 = 0
    }

    private let contents = Mutex(Contents())

    public init() {}

    public var head: LogPosition { contents.withLock { LogPosition(UInt64($0.events.count)) } }

    public func read(from position: LogPosition, limit: Int) throws -> [RecordedEvent] {
        contents.withLock { contents in
            let start = Int(max(position.rawValue, 1)) - 1
            guard start < contents.events.count else { return [] }
            return Array(contents.events[start..<min(contents.events.count, start + limit)])
        }
    }

    public func readStreamBackward(_ stream: StreamID, from version: UInt64?, limit: Int) throws -> [RecordedEvent] {
        contents.withLock { contents in
            Array(
                contents.events.reversed().lazy.filter { $0.stream == stream && $0.streamVersion <= version ?? .max }
                    .prefix(limit))
        }
    }

    public func waitForHead(after position: LogPosition) async throws -> LogPosition {
        let id = contents.withLock { contents in
            defer { contents.nextWaiter += 1 }
            return contents.nextWaiter
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let answer = contents.withLock { contents -> Result<LogPosition, any Error>? in
                    let head = LogPosition(UInt64(contents.events.count))
                    if head > position { return .success(head) }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    contents.waiting[id] = (position, continuation)
                    return nil
                }
                if let answer { continuation.resume(with: answer) }
            }
        } onCancel: {
            contents.withLock { $0.waiting.removeValue(forKey: id) }?.continuation.resume(throwing: CancellationError())
        }
    }

    public func append<Output: Sendable>(
        _ durability: WriteDurability, eventCount: Int, decide: @escaping @Sendable (any DecisionBatch) throws -> Output
    ) async throws -> Output {
        let (output, woken): (Output, [CheckedContinuation<LogPosition, any Error>]) = try contents.withLock {
            contents in
            let batch = Batch(
                contents.events.count, state: contents.state, versions: contents.streamVersions,
                commands: contents.commands)
            let output = try decide(batch)
            // Decided without an error: the batch's events and state changes take effect together.
            contents.events += batch.events
            contents.state = batch.tables
            contents.streamVersions = batch.versions
            contents.commands = batch.commands
            let head = LogPosition(UInt64(contents.events.count))
            let passed = contents.waiting.filter { $0.value.after < head }
            for id in passed.keys { contents.waiting.removeValue(forKey: id) }
            return (output, passed.values.map(\.continuation))
        }
        let head = self.head
        for continuation in woken { continuation.resume(returning: head) }
        return output
    }

    /// Not kept: whoever asks reads the state every time.
    public func newestRemoval(from table: StateTable) -> LogPosition? { nil }

    public func readState<R>(_ body: (any StateReader) throws -> R) throws -> R {
        let (state, head) = contents.withLock { ($0.state, LogPosition(UInt64($0.events.count))) }
        return try body(Snapshot(tables: state, position: head))
    }

    public func syncToDisk() throws {}

    /// The decision state as one position left it.
    private struct Snapshot: StateReader {
        let tables: [String: [[UInt8]: [UInt8]]]
        let position: LogPosition

        func withValue<R>(for key: [UInt8], in table: StateTable, _ body: (UnsafeRawBufferPointer?) throws -> R) throws
            -> R
        {
            guard let value = tables[table.name]?[key] else { return try body(nil) }
            return try value.withUnsafeBytes { try body($0) }
        }

        func forEach(
            in table: StateTable, from start: [UInt8],
            _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
        ) throws {
            let entries = (tables[table.name] ?? [:]).filter { !$0.key.lexicographicallyPrecedes(start) }
                .sorted { $0.key.lexicographicallyPrecedes($1.key) }
            for (key, value) in entries {
                let goOn = try key.withUnsafeBytes { key in try value.withUnsafeBytes { try body(key, $0) } }
                guard goOn else { return }
            }
        }
    }

    /// One decision: its appends and state changes, staged until it returns.
    private final class Batch: DecisionBatch, StateWriter {
        let recordedAt = EventTime.now
        var events: [RecordedEvent] = []
        var tables: [String: [[UInt8]: [UInt8]]]
        var versions: [StreamID: UInt64]
        var commands: [CommandID: AppendOutcome]
        private let before: Int

        init(
            _ before: Int, state: [String: [[UInt8]: [UInt8]]], versions: [StreamID: UInt64],
            commands: [CommandID: AppendOutcome]
        ) {
            self.before = before
            tables = state
            self.versions = versions
            self.commands = commands
        }

        var head: LogPosition { LogPosition(UInt64(before + events.count)) }
        var position: LogPosition { head }
        var state: any StateWriter { self }

        func append(_ request: AppendRequest) throws -> AppendOutcome {
            try request.validate()
            if let original = commands[request.commandID] {
                return AppendOutcome(
                    firstPosition: original.firstPosition, lastPosition: original.lastPosition,
                    streamVersion: original.streamVersion, isReplay: true)
            }
            let current = versions[request.stream] ?? 0
            guard request.expectedVersion.admits(current) else {
                throw EventLogError.wrongExpectedVersion(
                    stream: request.stream, expected: request.expectedVersion, actual: current)
            }
            let first = head.next
            for (offset, event) in request.events.enumerated() {
                events.append(
                    RecordedEvent(
                        position: head.next, stream: request.stream, streamVersion: current + UInt64(offset) + 1,
                        type: event.type, schemaVersion: event.schemaVersion, recordedAt: recordedAt,
                        commandID: request.commandID, correlationID: request.correlationID, actor: request.actor,
                        payload: event.payload))
            }
            let outcome = AppendOutcome(
                firstPosition: first, lastPosition: head, streamVersion: current + UInt64(request.events.count),
                isReplay: false)
            versions[request.stream] = outcome.streamVersion
            commands[request.commandID] = outcome
            return outcome
        }

        func appendRecorded(_ recorded: [RecordedEvent]) throws {
            for event in recorded {
                guard event.position == head.next else {
                    throw EventLogError(
                        .invalidAppend, "event at position \(event.position) where \(head.next) is next")
                }
                events.append(event)
                versions[event.stream] = event.streamVersion
            }
        }

        func withValue<R>(for key: [UInt8], in table: StateTable, _ body: (UnsafeRawBufferPointer?) throws -> R) throws
            -> R
        {
            try Snapshot(tables: tables, position: head).withValue(for: key, in: table, body)
        }

        func forEach(
            in table: StateTable, from start: [UInt8],
            _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
        ) throws {
            try Snapshot(tables: tables, position: head).forEach(in: table, from: start, body)
        }

        func put(_ value: [UInt8], for key: [UInt8], in table: StateTable) throws {
            tables[table.name, default: [:]][key] = value
        }

        @discardableResult
        func delete(_ key: [UInt8], in table: StateTable) throws -> Bool {
            tables[table.name]?.removeValue(forKey: key) != nil
        }
    }
}
