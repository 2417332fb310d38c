/// Which way a read walks the log.
public enum ReadDirection: Sendable {
    /// Ascending positions or versions, starting at the one given.
    case forward
    /// Descending, starting at the one given (or the last one, if the one given is past the end).
    case backward
}

extension EventLog {
    /// Up to `limit` events starting at `position` (inclusive), in `direction`.
    public func read(
        from position: LogPosition, direction: ReadDirection = .forward, limit: Int = 1000
    ) throws -> [RecordedEvent] {
        var events: [RecordedEvent] = []
        events.reserveCapacity(min(limit, 4096))
        try withReadTransaction { transaction in
            try transaction.withCursor(on: schema.events) { cursor in
                var entry = try LogSchema.withPositionKey(position) { key in
                    try Self.seek(cursor, to: key, direction: direction)
                }
                while let current = entry, events.count < limit {
                    let key = LogSchema.position(fromKey: current.key)
                    events.append(try EventRecordCodec.decode(current.value, storedAt: key))
                    entry = try direction == .forward ? cursor.next() : cursor.previous()
                }
            }
        }
        return events
    }

    /// Up to `limit` events of `stream` starting at `version` (inclusive), in `direction`.
    public func read(
        stream: StreamID, fromVersion version: UInt64 = 1, direction: ReadDirection = .forward, limit: Int = 1000
    ) throws -> [RecordedEvent] {
        let prefix = LogSchema.streamIndexPrefix(stream)
        var events: [RecordedEvent] = []
        try withReadTransaction { transaction in
            try transaction.withCursor(on: schema.streamIndex) { cursor in
                var entry = try LogSchema.streamIndexKey(prefix: prefix, version: version).withUnsafeBytes { key in
                    try Self.seek(cursor, to: key, direction: direction)
                }
                while let current = entry, events.count < limit, current.key.starts(with: prefix),
                    current.key.count == prefix.count + 8
                {
                    let position = LogSchema.position(fromKey: current.value)
                    guard let record = try transaction.value(in: schema.events, for: current.value) else {
                        throw EventLogError.corruptRecord(at: position, "is indexed for stream \(stream) but missing")
                    }
                    events.append(try EventRecordCodec.decode(record, storedAt: position))
                    entry = try direction == .forward ? cursor.next() : cursor.previous()
                }
            }
        }
        return events
    }

    /// The version of the last event in `stream`; 0 when it has none.
    public func streamVersion(of stream: StreamID) throws -> UInt64 {
        var name = stream.rawValue
        return try withReadTransaction { transaction in
            try name.withUTF8 { key in
                try transaction.value(in: schema.streamHeads, for: UnsafeRawBufferPointer(key))
                    .map { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) } ?? 0
            }
        }
    }

    /// Decodes every event from `position` through `last` in order, calling `body` with each, a chunk of events per
    /// read transaction so that a long scan never pins the map.
    public func scan(
        from position: LogPosition = 1, through last: LogPosition? = nil, chunkSize: Int = 8192,
        _ body: (RecordedEvent) throws -> Void
    ) throws {
        let end = last ?? head
        var next = max(position, 1)
        while next <= end {
            try withReadTransaction { transaction in
                try transaction.withCursor(on: schema.events) { cursor in
                    var entry = try LogSchema.withPositionKey(next) { try cursor.seek(atLeast: $0) }
                    var decoded = 0
                    while let current = entry, decoded < chunkSize {
                        let key = LogSchema.position(fromKey: current.key)
                        guard key <= end else { break }
                        try body(try EventRecordCodec.decode(current.value, storedAt: key))
                        next = key.next
                        decoded += 1
                        entry = try cursor.next()
                    }
                    if entry == nil || decoded == 0 { next = end.next }
                }
            }
        }
    }

    /// Runs `body` in a read transaction, with LMDB's failures reported as ``EventLogError``.
    func withReadTransaction<R>(_ body: (LMDBReadTransaction) throws -> R) throws -> R {
        do {
            return try environment.read(body)
        } catch let error as LMDBError {
            throw EventLogError.storage(error)
        }
    }

    /// Positions `cursor` at `key`, or the nearest entry in `direction` from it.
    private static func seek(
        _ cursor: LMDBCursor, to key: UnsafeRawBufferPointer, direction: ReadDirection
    ) throws -> LMDBCursor.Entry? {
        let atLeast = try cursor.seek(atLeast: key)
        switch direction {
        case .forward:
            return atLeast
        case .backward:
            guard let atLeast else { return try cursor.last() }
            return atLeast.key.elementsEqual(key) ? atLeast : try cursor.previous()
        }
    }
}
