import ChorusLog
import ChorusStorage

/// The log as seen from inside the writer's one open write transaction (``LMDBEventLog/append(_:eventCount:decide:)``):
/// appends and state changes made here are committed together, durably, when the transaction commits.
///
/// The transaction writes the event records and whatever the decision writes to ``state`` (this batch itself). Stream
/// versions and command ids are decided against the writer's unindexed tail, which holds this batch's own appends too,
/// then the indexes on disk: together, everything before each append.
final class LogWriteBatch: DecisionBatch, StateWriter {
    private let environment: LMDBEnvironment
    let transaction: LMDBWriteTransaction
    let schema: LogSchema
    let recordedAt: EventTime
    /// It advances only when an append succeeds.
    private(set) var head: LogPosition
    /// The state tables a key was removed from (``StateRemovals``).
    private(set) var removedFrom: Set<StateTable> = []
    /// The state tables (``LMDBEventLog/Configuration/stateTables``), in this same transaction.
    var state: any StateWriter { self }
    /// The writer's tail, lent for the transaction (``takeTail()`` hands it back), with this batch's appends recorded
    /// as they are staged.
    private var tail: UnindexedTail
    private let index: LogIndex

    init(
        environment: LMDBEnvironment, transaction: LMDBWriteTransaction, schema: LogSchema, head: LogPosition,
        tail: UnindexedTail, recordedAt: EventTime
    ) {
        self.environment = environment
        self.transaction = transaction
        self.schema = schema
        self.head = head
        self.tail = tail
        self.index = LogIndex(schema: schema)
        self.recordedAt = recordedAt
    }

    /// The writer's tail, with this batch's appends; the batch is done.
    func takeTail() -> UnindexedTail { tail.take() }

    /// A thrown ``LMDBError`` aborts the whole transaction.
    func append(_ request: AppendRequest) throws -> AppendOutcome {
        try request.validate()
        if let original = try outcome(ofCommand: request.commandID) {
            return AppendOutcome(
                firstPosition: original.firstPosition, lastPosition: original.lastPosition,
                streamVersion: original.streamVersion, isReplay: true)
        }
        let currentVersion = try streamVersion(request.stream)
        guard request.expectedVersion.admits(currentVersion) else {
            throw EventLogError.wrongExpectedVersion(
                stream: request.stream, expected: request.expectedVersion, actual: currentVersion)
        }

        var position = head
        var version = currentVersion
        for event in request.events {
            position = position.next
            version += 1
            let fields = EventRecordCodec.Fields(
                position: position, streamVersion: version, recordedAt: recordedAt, commandID: request.commandID,
                correlationID: request.correlationID, stream: request.stream, actor: request.actor, event: event)
            try LogSchema.withPositionKey(position) { positionKey in
                try transaction.reserve(
                    EventRecordCodec.encodedSize(fields), for: positionKey, in: schema.events, append: true
                ) { EventRecordCodec.encode(fields, into: $0) }
            }
        }
        let outcome = AppendOutcome(
            firstPosition: head.next, lastPosition: position, streamVersion: version, isReplay: false)
        tail.record(outcome, stream: request.stream, command: request.commandID)
        head = position
        return outcome
    }

    func appendRecorded(_ events: [RecordedEvent]) throws {
        guard let first = events.first else { return }
        var version = try streamVersion(first.stream)
        for (offset, event) in events.enumerated() {
            let position = LogPosition(head.rawValue + UInt64(offset) + 1)
            guard event.position == position else {
                throw EventLogError.invalidAppend("event at position \(event.position) where \(position) is next")
            }
            guard event.commandID == first.commandID, event.stream == first.stream else {
                throw EventLogError.invalidAppend(
                    "position \(event.position): one command's events share a command and a stream")
            }
            version += 1
            guard event.streamVersion == version else {
                throw EventLogError.invalidAppend(
                    "position \(event.position): stream \(event.stream) is at version \(version - 1), not \(event.streamVersion - 1)"
                )
            }
            try NewEvent.validate(type: event.type, payloadSize: event.payload.count)
        }
        guard first.actor.utf8.count <= AppendRequest.maximumActorLength else {
            throw EventLogError.invalidAppend(
                "position \(first.position): an actor of more than \(AppendRequest.maximumActorLength) bytes")
        }
        // The rest of a command whose first events an earlier, interrupted import appended may follow them.
        var commandStart: LogPosition?
        if let original = try outcome(ofCommand: first.commandID) {
            guard original.lastPosition == head else {
                throw EventLogError.invalidAppend(
                    "position \(first.position): command \(first.commandID) was already appended at \(original.firstPosition)"
                )
            }
            commandStart = original.firstPosition
        }
        for event in events {
            try LogSchema.withPositionKey(event.position) { positionKey in
                try transaction.reserve(
                    EventRecordCodec.encodedSize(event), for: positionKey, in: schema.events, append: true
                ) { EventRecordCodec.encode(event, into: $0) }
            }
            tail.record(event, commandStartsAt: commandStart)
            head = event.position
        }
    }

    func appendPrepared(_ prepared: PreparedRecordedEvents) throws -> Bool {
        // Only where the indexes reach the head, so that the batch's entries go on from them.
        guard prepared.firstPosition == head.next, tail.isEmpty,
            try index.writeIfAdmitted(prepared.index.inKeyOrder(), through: prepared.lastPosition, in: transaction)
        else { return false }
        try appendRecords(of: prepared)
        return true
    }

    func appendPrepared(_ prepared: PreparedRecordedEvents, holdingIndexIn held: HeldImportIndex) throws -> Bool {
        // From an empty log, or straight after the events held: the index reaches the last position before them.
        guard prepared.firstPosition == head.next, tail.isEmpty, held.lastPosition == head,
            try held.eventCount > 0 || index.indexedThrough(in: transaction) == head, held.admits(prepared.index)
        else { return false }
        try appendRecords(of: prepared)
        return true
    }

    func writeIndex(heldIn held: HeldImportIndex) throws {
        guard held.eventCount > 0 else { return }
        precondition(held.lastPosition == head && tail.isEmpty, "events were appended after those held")
        // The empty tables fill pages past the file's last: room for the index, and for the decision state an import
        // writes next, about 250 bytes an event in all, reserved on the disk first (see ``DiskBlockReservation``).
        try environment.reserveDiskBlocks(bytes: held.eventCount * 256)
        try held.withMergedEntries { try index.append($0, through: $1, in: transaction) }
    }

    private func appendRecords(of prepared: PreparedRecordedEvents) throws {
        try prepared.forEachRecord { position, record in
            try LogSchema.withPositionKey(position) { key in
                try transaction.put(record, for: key, in: schema.events, append: true)
            }
        }
        head = prepared.lastPosition
    }

    /// The stream's last version, including appends earlier in the batch.
    func streamVersion(_ stream: StreamID) throws -> UInt64 {
        if let version = tail.streamVersions[stream] { return version }
        return try index.streamVersion(stream, in: transaction)
    }

    private func outcome(ofCommand command: CommandID) throws -> AppendOutcome? {
        if let outcome = tail.outcome(ofCommand: command) { return outcome }
        return try index.outcome(ofCommand: command, in: transaction)
    }

    // MARK: The state tables

    var position: LogPosition { head }

    func withValue<R>(for key: [UInt8], in table: StateTable, _ body: (UnsafeRawBufferPointer?) throws -> R) throws -> R
    {
        try body(try key.withUnsafeBytes { try transaction.value(in: schema.database(table), for: $0) })
    }

    func forEach(
        in table: StateTable, from start: [UInt8],
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        try transaction.forEachEntry(of: schema.database(table), from: start, body)
    }

    func put(_ value: [UInt8], for key: [UInt8], in table: StateTable) throws {
        try key.withUnsafeBytes { key in
            try value.withUnsafeBytes { value in try transaction.put(value, for: key, in: schema.database(table)) }
        }
    }

    func appendInKeyOrder(
        in table: StateTable, _ body: (_ append: StateKeyAppend) throws -> Void
    ) throws {
        try transaction.withWriteCursor(on: schema.database(table)) { cursor in
            try body { key, value in try cursor.append(value, for: key) }
        }
    }

    /// Through one cursor: LMDB looks in the page the cursor is on before searching from the root, which the next key
    /// in order nearly always finds; `mdb_put` opens a fresh cursor each time.
    func writeInKeyOrder(
        in table: StateTable, _ body: (_ write: StateKeyWrite) throws -> Void
    ) throws {
        try transaction.withWriteCursor(on: schema.database(table)) { cursor in
            try body { key, value in
                if let value {
                    try cursor.put(value, for: key)
                } else if try cursor.delete(key) {
                    removedFrom.insert(table)
                }
            }
        }
    }

    @discardableResult
    func delete(_ key: [UInt8], in table: StateTable) throws -> Bool {
        let removed = try key.withUnsafeBytes { try transaction.delete($0, in: schema.database(table)) }
        if removed { removedFrom.insert(table) }
        return removed
    }
}
