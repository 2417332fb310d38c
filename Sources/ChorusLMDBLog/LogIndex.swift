import ChorusLog
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
        try write(IndexEntries(tail), through: head, in: transaction)
    }

    /// Writes `sorted`, the entries of every event after the checkpoint, into the indexes, and moves the checkpoint to
    /// `head`.
    func write(_ sorted: IndexEntries, through head: LogPosition, in transaction: LMDBWriteTransaction) throws {
        precondition(sorted.streamsInKeyOrder, "index entries written out of key order")
        try transaction.withWriteCursor(on: schema.streamIndex) { streamIndex in
            var key: [UInt8] = []
            for stream in sorted.streams {
                Self.setPrefix(of: stream, in: sorted, to: &key)
                try Self.put(stream, of: sorted, through: streamIndex, prefixedBy: &key)
            }
        }
        try writeCommands(sorted, through: head, in: transaction)
    }

    /// Writes `sorted` like ``write(_:through:in:)`` if it may follow the indexes, which reach the log's head: each of
    /// its streams goes on from its last version, and none of its commands was appended before. Returns false, having
    /// written nothing, when it may not. Each stream's last version is read through the cursor that then puts the
    /// stream's entries, which nearly always land on the page the read found: one search per stream, not two.
    func writeIfAdmitted(
        _ sorted: IndexEntries, through head: LogPosition, in transaction: LMDBWriteTransaction
    ) throws -> Bool {
        precondition(sorted.streamsInKeyOrder, "index entries written out of key order")
        let commandsAreNew = try transaction.withCursor(on: schema.commands) { cursor in
            for command in sorted.commands {
                let known = try command.withKey { key in try cursor.seek(atLeast: key)?.key.elementsEqual(key) }
                if known == true { return false }
            }
            return true
        }
        guard commandsAreNew else { return false }
        let streamsGoOn = try transaction.withWriteCursor(on: schema.streamIndex) { streamIndex in
            var key: [UInt8] = []
            for (offset, stream) in sorted.streams.enumerated() {
                Self.setPrefix(of: stream, in: sorted, to: &key)
                let last = try Self.head(ofPrefix: &key, through: streamIndex.reading)
                guard sorted.firstVersion(of: stream) == last + 1 else {
                    // The streams before it are written already: taken out again.
                    for earlier in sorted.streams[..<offset] {
                        try Self.forEachKey(of: earlier, in: sorted, key: &key) { key, _ in
                            _ = try streamIndex.delete(key)
                        }
                    }
                    return false
                }
                // `key` holds the stream's prefix still: built once for the read and the puts.
                try Self.put(stream, of: sorted, through: streamIndex, prefixedBy: &key)
            }
            return true
        }
        guard streamsGoOn else { return false }
        try writeCommands(sorted, through: head, in: transaction)
        return true
    }

    /// Puts the stream-index entries of `stream`, building each key in `key`, which holds the stream's prefix.
    private static func put(
        _ stream: IndexEntries.Stream, of sorted: IndexEntries, through streamIndex: LMDBWriteCursor,
        prefixedBy key: inout [UInt8]
    ) throws {
        try forEachKey(of: stream, in: sorted, prefixedBy: &key) { key, entry in
            try LogSchema.withIndexValue(entry.position) { try streamIndex.put($0, for: key) }
        }
    }

    /// Calls `body` with each entry of `stream` and its stream-index key, in order, each key built in `key`.
    private static func forEachKey(
        of stream: IndexEntries.Stream, in sorted: IndexEntries, key: inout [UInt8],
        _ body: (UnsafeRawBufferPointer, IndexEntries.Entry) throws -> Void
    ) throws {
        setPrefix(of: stream, in: sorted, to: &key)
        try forEachKey(of: stream, in: sorted, prefixedBy: &key, body)
    }

    /// Like ``forEachKey(of:in:key:_:)``, `key` holding the stream's prefix already.
    private static func forEachKey(
        of stream: IndexEntries.Stream, in sorted: IndexEntries, prefixedBy key: inout [UInt8],
        _ body: (UnsafeRawBufferPointer, IndexEntries.Entry) throws -> Void
    ) throws {
        let prefixLength = key.count
        key.append(contentsOf: repeatElement(0, count: 8))
        // Through the entries' buffer: a slice of the array retained and released it for every stream.
        try sorted.entries.withUnsafeBufferPointer { entries in
            for entry in entries[stream.entries] {
                key.withUnsafeMutableBytes {
                    $0.storeBytes(of: entry.version.bigEndian, toByteOffset: prefixLength, as: UInt64.self)
                }
                try key.withUnsafeBytes { try body($0, entry) }
            }
        }
    }

    /// Sets `key` to the stream-index prefix of `stream`.
    private static func setPrefix(
        of stream: IndexEntries.Stream, in sorted: IndexEntries, to key: inout [UInt8]
    ) {
        key.removeAll(keepingCapacity: true)
        sorted.withName(of: stream) { LogSchema.appendStreamIndexPrefix(name: $0, to: &key) }
    }

    /// Writes the commands of `sorted` and moves the checkpoint to `head`.
    private func writeCommands(
        _ sorted: IndexEntries, through head: LogPosition, in transaction: LMDBWriteTransaction
    ) throws {
        try transaction.withWriteCursor(on: schema.commands) { cursor in
            for command in sorted.commands {
                try command.withKey { key in try Self.withValue(of: command) { try cursor.put($0, for: key) } }
            }
        }
        try moveCheckpoint(to: head, in: transaction)
    }

    /// Appends `sorted`, which indexes every event through `head`, to the index tables, which must be empty, each key
    /// after the last (`MDB_APPEND`), and moves the checkpoint to `head`: how an import into an empty log writes the
    /// index it held (``HeldImportIndex``).
    func append(_ sorted: IndexEntries, through head: LogPosition, in transaction: LMDBWriteTransaction) throws {
        try transaction.withWriteCursor(on: schema.streamIndex) { streamIndex in
            var key: [UInt8] = []
            for stream in sorted.streams {
                try Self.forEachKey(of: stream, in: sorted, key: &key) { key, entry in
                    try LogSchema.withIndexValue(entry.position) { try streamIndex.append($0, for: key) }
                }
            }
        }
        try transaction.withWriteCursor(on: schema.commands) { cursor in
            for command in sorted.commands {
                try command.withKey { key in try Self.withValue(of: command) { try cursor.append($0, for: key) } }
            }
        }
        try moveCheckpoint(to: head, in: transaction)
    }

    /// Lends `body` the commands-table value of `command`: its outcome.
    private static func withValue<R>(
        of command: IndexEntries.Command, _ body: (UnsafeRawBufferPointer) throws -> R
    ) rethrows -> R {
        let value = (
            command.outcome.firstPosition.rawValue.littleEndian, command.outcome.lastPosition.rawValue.littleEndian,
            command.outcome.streamVersion.littleEndian
        )
        return try withUnsafeBytes(of: value, body)
    }

    private func moveCheckpoint(to head: LogPosition, in transaction: LMDBWriteTransaction) throws {
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
