/// The log as seen from inside the writer's one open write transaction: appends decided here are committed
/// together, durably, when the batch's transaction commits.
///
/// Only the log writer makes a batch, and it lives only during one transaction.
final class LogWriteBatch {
    let transaction: LMDBWriteTransaction
    let schema: LogSchema
    /// The time stamped on every event of the batch.
    let recordedAt: EventTime
    /// The last position assigned so far; it advances only when an append succeeds.
    private(set) var head: LogPosition

    init(transaction: LMDBWriteTransaction, schema: LogSchema, head: LogPosition, recordedAt: EventTime) {
        self.transaction = transaction
        self.schema = schema
        self.head = head
        self.recordedAt = recordedAt
    }

    /// Appends `request`'s events at the next positions, or returns the original outcome of a repeated command id.
    ///
    /// Every check happens before the first write, so an append that throws ``EventLogError`` has written nothing;
    /// a thrown ``LMDBError`` aborts the whole transaction.
    func append(_ request: AppendRequest) throws -> AppendOutcome {
        try request.validate()
        if let original = try outcome(ofCommand: request.commandID) {
            return original
        }
        let currentVersion = try streamVersion(request.stream)
        guard request.expectedVersion.admits(currentVersion) else {
            throw EventLogError.wrongExpectedVersion(
                stream: request.stream, expected: request.expectedVersion, actual: currentVersion)
        }

        let indexPrefix = LogSchema.streamIndexPrefix(request.stream)
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
                try LogSchema.streamIndexKey(prefix: indexPrefix, version: version).withUnsafeBytes { indexKey in
                    try transaction.put(positionKey, for: indexKey, in: schema.streamIndex)
                }
            }
        }
        let outcome = AppendOutcome(
            firstPosition: head.next, lastPosition: position, streamVersion: version, isReplay: false)
        try recordStreamVersion(version, of: request.stream)
        try record(outcome, ofCommand: request.commandID)
        head = position
        return outcome
    }

    /// The stream's last version as of this transaction, including appends earlier in the batch.
    func streamVersion(_ stream: StreamID) throws -> UInt64 {
        var name = stream.rawValue
        return try name.withUTF8 { key throws in
            try transaction.value(in: schema.streamHeads, for: UnsafeRawBufferPointer(key))
                .map { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) } ?? 0
        }
    }

    private func recordStreamVersion(_ version: UInt64, of stream: StreamID) throws {
        var name = stream.rawValue
        try name.withUTF8 { key throws in
            try withUnsafeBytes(of: version.littleEndian) { value throws in
                try transaction.put(value, for: UnsafeRawBufferPointer(key), in: schema.streamHeads)
            }
        }
    }

    private func outcome(ofCommand commandID: CommandID) throws -> AppendOutcome? {
        try withUnsafeBytes(of: commandID.uuid.uuid) { key throws in
            try transaction.value(in: schema.commands, for: key).map { value in
                AppendOutcome(
                    firstPosition: LogPosition(UInt64(littleEndian: value.loadUnaligned(fromByteOffset: 0, as: UInt64.self))),
                    lastPosition: LogPosition(UInt64(littleEndian: value.loadUnaligned(fromByteOffset: 8, as: UInt64.self))),
                    streamVersion: UInt64(littleEndian: value.loadUnaligned(fromByteOffset: 16, as: UInt64.self)),
                    isReplay: true)
            }
        }
    }

    private func record(_ outcome: AppendOutcome, ofCommand commandID: CommandID) throws {
        let value = (
            outcome.firstPosition.rawValue.littleEndian, outcome.lastPosition.rawValue.littleEndian,
            outcome.streamVersion.littleEndian
        )
        try withUnsafeBytes(of: commandID.uuid.uuid) { key throws in
            try withUnsafeBytes(of: value) { value throws in
                try transaction.put(value, for: key, in: schema.commands)
            }
        }
    }
}
