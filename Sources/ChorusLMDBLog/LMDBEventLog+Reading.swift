import ChorusLog
import ChorusStorage

/// Which way a read walks the log.
public enum ReadDirection: Sendable {
    /// Ascending positions or versions, starting at the one given.
    case forward
    /// Descending, starting at the one given (or the last one, if the one given is past the end).
    case backward
}

extension LMDBEventLog {
    /// Up to `limit` events starting at `position` (inclusive), in `direction`.
    public func read(
        from position: LogPosition, direction: ReadDirection = .forward, limit: Int = 1000
    ) throws -> [RecordedEvent] {
        var events: [RecordedEvent] = []
        events.reserveCapacity(min(limit, 4096))
        try withReadTransaction { transaction in
            try transaction.withEventCursor(schema) { cursor in
                var entry = try direction == .forward ? cursor.seek(atLeast: position) : cursor.seek(atMost: position)
                while let current = entry, events.count < limit {
                    events.append(try EventCursor.decode(current))
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
        let index = LogIndex(schema: schema)
        return try withReadTransaction { transaction in
            // The newest events are not in the stream index yet; they all come after the indexed ones.
            var unindexed: [RecordedEvent] = []
            try index.forEachUnindexedEvent(in: transaction, of: stream) { unindexed.append($0) }
            switch direction {
            case .forward:
                var events = try indexedEvents(of: stream, from: version, .forward, limit: limit, in: transaction)
                events += unindexed.lazy.filter { $0.streamVersion >= version }.prefix(limit - events.count)
                return events
            case .backward:
                var events = Array(unindexed.reversed().lazy.filter { $0.streamVersion <= version }.prefix(limit))
                let from = min(version, (unindexed.first?.streamVersion ?? .max) &- 1)
                events += try indexedEvents(
                    of: stream, from: from, .backward, limit: limit - events.count, in: transaction)
                return events
            }
        }
    }

    public func readStreamBackward(_ stream: StreamID, from version: UInt64?, limit: Int) throws -> [RecordedEvent] {
        try read(stream: stream, fromVersion: version ?? .max, direction: .backward, limit: limit)
    }

    /// The version of the last event in `stream`; 0 when it has none.
    public func streamVersion(of stream: StreamID) throws -> UInt64 {
        let index = LogIndex(schema: schema)
        return try withReadTransaction { transaction in
            var latest: UInt64?
            try index.forEachUnindexedEvent(in: transaction, of: stream) { latest = $0.streamVersion }
            return try latest ?? index.streamVersion(stream, in: transaction)
        }
    }

    /// Events of `stream` found through the stream index, which covers the log up to its checkpoint.
    private func indexedEvents(
        of stream: StreamID, from version: UInt64, _ direction: ReadDirection, limit: Int,
        in transaction: LMDBReadTransaction
    ) throws -> [RecordedEvent] {
        guard limit > 0, version > 0 else { return [] }
        let prefix = LogSchema.streamIndexPrefix(stream)
        var events: [RecordedEvent] = []
        try transaction.withCursor(on: schema.streamIndex) { cursor in
            var entry = try LogSchema.streamIndexKey(prefix: prefix, version: version).withUnsafeBytes { key in
                try Self.seek(cursor, to: key, direction: direction)
            }
            while let current = entry, events.count < limit, current.key.count == prefix.count + 8,
                current.key.starts(with: prefix)
            {
                let position = LogSchema.position(fromIndexValue: current.value)
                guard let record = try transaction.eventRecord(at: position, schema) else {
                    throw EventLogError.corruptRecord(at: position, "is indexed for stream \(stream) but missing")
                }
                events.append(try EventRecordCodec.decode(record, storedAt: position))
                entry = try direction == .forward ? cursor.next() : cursor.previous()
            }
        }
        return events
    }

    /// Decodes the events as it walks them, a chunk of `chunkSize` events per read transaction, so that a long scan
    /// never pins the map, and never holds more than one event.
    public func scan(
        from position: LogPosition, through last: LogPosition?, chunkSize: Int, _ body: (RecordedEvent) throws -> Void
    ) throws {
        let end = last ?? head
        var next = max(position, 1)
        while next <= end {
            try withReadTransaction { transaction in
                try transaction.withEventCursor(schema) { cursor in
                    var entry = try cursor.seek(atLeast: next)
                    var decoded = 0
                    while let current = entry, decoded < chunkSize {
                        guard current.position <= end else { break }
                        try body(try EventCursor.decode(current))
                        next = current.position.next
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
        try direction == .forward ? cursor.seek(atLeast: key) : cursor.seek(atMost: key)
    }
}
