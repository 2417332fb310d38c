import ChorusLog
import ChorusStorage

/// A cursor over the event records alone, which share LMDB's main database with the index databases' names
/// (see ``LogSchema``): it ends where the events end, in either direction.
struct EventCursor {
    typealias Entry = (position: LogPosition, record: UnsafeRawBufferPointer)

    private let cursor: LMDBCursor

    init(_ cursor: LMDBCursor) { self.cursor = cursor }

    /// The first event at or after `position`.
    func seek(atLeast position: LogPosition) throws -> Entry? {
        try event(LogSchema.withPositionKey(position) { try cursor.seek(atLeast: $0) })
    }

    /// The last event at or before `position`.
    func seek(atMost position: LogPosition) throws -> Entry? {
        try event(LogSchema.withPositionKey(position) { try cursor.seek(atMost: $0) })
    }

    func last() throws -> Entry? { try event(cursor.last()) }
    func next() throws -> Entry? { try event(cursor.next()) }
    func previous() throws -> Entry? { try event(cursor.previous()) }

    /// Decodes the record under the cursor, checking it against the position it is stored at.
    static func decode(_ entry: Entry) throws -> RecordedEvent {
        try EventRecordCodec.decode(entry.record, storedAt: entry.position)
    }

    private func event(_ entry: LMDBCursor.Entry?) throws -> Entry? {
        guard let entry, let position = try LogSchema.position(fromEventKey: entry.key) else { return nil }
        return (position, entry.value)
    }
}

extension LMDBTransactionReading {
    /// Runs `body` with a cursor over the log's events.
    func withEventCursor<R>(_ schema: LogSchema, _ body: (EventCursor) throws -> R) throws -> R {
        try withCursor(on: schema.events) { try body(EventCursor($0)) }
    }

    /// The record stored at `position`, if any.
    func eventRecord(at position: LogPosition, _ schema: LogSchema) throws -> UnsafeRawBufferPointer? {
        try LogSchema.withPositionKey(position) { try value(in: schema.events, for: $0) }
    }
}
