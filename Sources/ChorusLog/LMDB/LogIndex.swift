import ChorusStorage

/// The log's indexes on disk: stream index and commands, complete through a checkpoint position.
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
        var key = LogSchema.streamIndexPrefix(stream)
        return try transaction.withCursor(on: schema.streamIndex) { try Self.head(ofPrefix: &key, through: $0) }
    }

    /// The last version in the stream index of the stream whose index prefix `key` holds (0 when it has none), found
    /// through `cursor` on the stream index: the entry at or before the prefix and the highest version. `key` is left
    /// as it came.
    private static func head(ofPrefix key: inout [UInt8], through cursor: LMDBCursor) throws -> UInt64 {
        let prefixLength = key.count
        LogSchema.appendStreamHeadBound(to: &key)
        defer { key.removeSubrange(prefixLength...) }
        return try key.withUnsafeBytes { bound in
            guard let entry = try cursor.seek(atMost: bound), entry.key.count == prefixLength + 8,
                UnsafeRawBufferPointer(rebasing: entry.key[..<prefixLength])
                    .elementsEqual(UnsafeRawBufferPointer(rebasing: bound[..<prefixLength]))
            else { return 0 }
            return LogSchema.version(fromStreamIndexKey: entry.key)
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

    /// Writes `tail` into the indexes, keys in sorted order through one cursor per table, so that each put searches
    /// only the page the last one touched, and moves the checkpoint to `head`.
    func write(_ tail: UnindexedTail, through head: LogPosition, in transaction: LMDBWriteTransaction) throws {
        try write(SortedIndexEntries(tail), through: head, in: transaction)
    }

    /// Writes `sorted`, the entries of every event after the checkpoint, into the indexes, and moves the checkpoint to
    /// `head`.
    func write(_ sorted: SortedIndexEntries, through head: LogPosition, in transaction: LMDBWriteTransaction) throws {
        try transaction.withWriteCursor(on: schema.streamIndex) { streamIndex in
            var key: [UInt8] = []
            for group in sorted.streams {
                key.removeAll(keepingCapacity: true)
                sorted.withName(of: group) { LogSchema.appendStreamIndexPrefix(name: $0, to: &key) }
                let prefixLength = key.count
                key.append(contentsOf: repeatElement(0, count: 8))
                for entry in sorted.entries[group.entries] {
                    key.withUnsafeMutableBytes {
                        $0.storeBytes(of: entry.version.bigEndian, toByteOffset: prefixLength, as: UInt64.self)
                    }
                    try key.withUnsafeBytes { key in
                        try LogSchema.withIndexValue(entry.position) { try streamIndex.put($0, for: key) }
                    }
                }
            }
        }
        try transaction.withWriteCursor(on: schema.commands) { cursor in
            for command in sorted.commands {
                let value = (
                    command.outcome.firstPosition.rawValue.littleEndian,
                    command.outcome.lastPosition.rawValue.littleEndian, command.outcome.streamVersion.littleEndian
                )
                try command.withKey { key in try withUnsafeBytes(of: value) { try cursor.put($0, for: key) } }
            }
        }
        try LogSchema.indexedThroughKey.withUnsafeBytes { key in
            try withUnsafeBytes(of: head.rawValue.littleEndian) { value in
                try transaction.put(value, for: key, in: schema.meta)
            }
        }
    }

    /// Whether `sorted` may follow the indexes, which reach the log's head: each of its streams goes on from its last
    /// version, and none of its commands was appended before. The indexes are looked up in key order, through one
    /// cursor per table.
    func admits(_ sorted: SortedIndexEntries, in transaction: some LMDBTransactionReading) throws -> Bool {
        let streamsGoOn = try transaction.withCursor(on: schema.streamIndex) { cursor in
            var key: [UInt8] = []
            for group in sorted.streams {
                key.removeAll(keepingCapacity: true)
                sorted.withName(of: group) { LogSchema.appendStreamIndexPrefix(name: $0, to: &key) }
                let last = try Self.head(ofPrefix: &key, through: cursor)
                guard sorted.entries[group.entries].first?.version == last + 1 else { return false }
            }
            return true
        }
        guard streamsGoOn else { return false }
        return try transaction.withCursor(on: schema.commands) { cursor in
            for command in sorted.commands {
                let known = try command.withKey { key in try cursor.seek(atLeast: key)?.key.elementsEqual(key) }
                if known == true { return false }
            }
            return true
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
