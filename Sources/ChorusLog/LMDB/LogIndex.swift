import ChorusStorage

/// The log's indexes on disk: stream index, stream heads and commands, complete through a checkpoint position.
/// The writer extends them from its ``UnindexedTail``; readers add the events after the checkpoint themselves.
struct LogIndex: Sendable {
    let schema: LogSchema

    /// The last position the indexes cover.
    func indexedThrough(in transaction: some LMDBTransactionReading) throws -> LogPosition {
        try LogSchema.indexedThroughKey.withUnsafeBytes { key in
            try transaction.value(in: schema.meta, for: key)
                .map { LogPosition(UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self))) } ?? .start
        }
    }

    /// The version of `stream` as of the checkpoint; 0 when it had none.
    func streamVersion(_ stream: StreamID, in transaction: some LMDBTransactionReading) throws -> UInt64 {
        var name = stream.rawValue
        return try name.withUTF8 { key in
            try transaction.value(in: schema.streamHeads, for: UnsafeRawBufferPointer(key))
                .map { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) } ?? 0
        }
    }

    /// What `command` appended, if it was appended before the checkpoint.
    func outcome(ofCommand command: CommandID, in transaction: some LMDBTransactionReading) throws -> AppendOutcome? {
        try withUnsafeBytes(of: command.uuid.uuid) { key in
            try transaction.value(in: schema.commands, for: key).map { value in
                AppendOutcome(
                    firstPosition: LogPosition(
                        UInt64(littleEndian: value.loadUnaligned(fromByteOffset: 0, as: UInt64.self))),
                    lastPosition: LogPosition(
                        UInt64(littleEndian: value.loadUnaligned(fromByteOffset: 8, as: UInt64.self))),
                    streamVersion: UInt64(littleEndian: value.loadUnaligned(fromByteOffset: 16, as: UInt64.self)),
                    isReplay: true)
            }
        }
    }

    /// Writes `tail` into the indexes, keys in sorted order so that each page is touched once, and moves the
    /// checkpoint to `head`.
    func write(_ tail: UnindexedTail, through head: LogPosition, in transaction: LMDBWriteTransaction) throws {
        // A stream's entries are already in version order: group them, and sort only the streams. One hash of each
        // entry's stream: each stream's last version is its group's last entry.
        var groupOfStream: [StreamID: Int] = [:]
        var groups: [(bytes: [UInt8], entries: [UnindexedTail.IndexEntry])] = []
        for entry in tail.indexEntries {
            if let group = groupOfStream[entry.stream] {
                groups[group].entries.append(entry)
            } else {
                groupOfStream[entry.stream] = groups.count
                groups.append((Array(entry.stream.rawValue.utf8), [entry]))
            }
        }
        // In LMDB's key order, with memcmp: comparing the names' UTF-8 views was half of writing an import's index,
        // and the generic `lexicographicallyPrecedes` half of what was left of the sort.
        groups.sort { KeyOrder.precedes($0.bytes, $1.bytes) }
        var key: [UInt8] = []
        for group in groups {
            guard let last = group.entries.last else { continue }
            key = LogSchema.streamIndexPrefix(last.stream)
            let prefixLength = key.count
            key.append(contentsOf: repeatElement(0, count: 8))
            for entry in group.entries {
                key.withUnsafeMutableBytes {
                    $0.storeBytes(of: entry.version.bigEndian, toByteOffset: prefixLength, as: UInt64.self)
                }
                try key.withUnsafeBytes { key in
                    try LogSchema.withIndexValue(entry.position) { value in
                        try transaction.put(value, for: key, in: schema.streamIndex)
                    }
                }
            }
            try group.bytes.withUnsafeBytes { name in
                try withUnsafeBytes(of: last.version.littleEndian) { value in
                    try transaction.put(value, for: name, in: schema.streamHeads)
                }
            }
        }
        // Command ids compare as two big-endian integers; UUIDv7 ids arrive nearly sorted already.
        let commands = tail.commands.map { command, outcome in
            withUnsafeBytes(of: command.uuid.uuid) { bytes in
                (
                    high: UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self)),
                    low: UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self)), outcome: outcome
                )
            }
        }.sorted { ($0.high, $0.low) < ($1.high, $1.low) }
        for command in commands {
            let commandKey = (command.high.bigEndian, command.low.bigEndian)
            let value = (
                command.outcome.firstPosition.rawValue.littleEndian, command.outcome.lastPosition.rawValue.littleEndian,
                command.outcome.streamVersion.littleEndian
            )
            try withUnsafeBytes(of: commandKey) { key in
                try withUnsafeBytes(of: value) { value in try transaction.put(value, for: key, in: schema.commands) }
            }
        }
        try LogSchema.indexedThroughKey.withUnsafeBytes { key in
            try withUnsafeBytes(of: head.rawValue.littleEndian) { value in
                try transaction.put(value, for: key, in: schema.meta)
            }
        }
    }

    /// The events after the checkpoint, as the writer's tail, read back when the log opens.
    func unindexedTail(in transaction: some LMDBTransactionReading) throws -> UnindexedTail {
        var tail = UnindexedTail()
        try forEachUnindexedEvent(in: transaction) { tail.record($0) }
        return tail
    }

    /// Calls `body` with every event after the checkpoint (only those of `stream`, when given), in position order.
    func forEachUnindexedEvent(
        in transaction: some LMDBTransactionReading, of stream: StreamID? = nil, _ body: (RecordedEvent) throws -> Void
    ) throws {
        let checkpoint = try indexedThrough(in: transaction)
        let streamName = stream.map { Array($0.rawValue.utf8) }
        try transaction.withEventCursor(schema) { cursor in
            var entry = try cursor.seek(atLeast: checkpoint.next)
            while let current = entry {
                let wanted = streamName?.withUnsafeBytes { EventRecordCodec.belongs(current.record, to: $0) } ?? true
                if wanted { try body(try EventCursor.decode(current)) }
                entry = try cursor.next()
            }
        }
    }
}
