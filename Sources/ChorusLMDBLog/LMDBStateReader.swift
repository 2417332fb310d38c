import ChorusLog
import ChorusStorage

/// The decision state in a read transaction of the log (``LMDBEventLog/readState(_:)``). Two words: an existential
/// holds it without allocating, and every authenticated request reads its session through one.
struct LMDBStateReader: StateReader {
    let log: LMDBEventLog
    let transaction: LMDBReadTransaction

    var position: LogPosition {
        get throws { try transaction.withEventCursor(log.schema) { try $0.last()?.position } ?? .start }
    }

    func withValue<R>(for key: [UInt8], in table: StateTable, _ body: (UnsafeRawBufferPointer?) throws -> R) throws -> R
    {
        // A table a log opened read-only lacks (written by an older Chorus) holds nothing.
        guard let database = log.schema.existingDatabase(table) else { return try body(nil) }
        return try body(try key.withUnsafeBytes { try transaction.value(in: database, for: $0) })
    }

    func forEach(
        in table: StateTable, from start: [UInt8],
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        guard let database = log.schema.existingDatabase(table) else { return }
        try transaction.forEachEntry(of: database, from: start, body)
    }
}

extension LMDBTransactionReading {
    /// Visits the entries of `database` in key order, from the first key not below `start`, until `body` returns
    /// false.
    func forEachEntry(
        of database: LMDBDatabase, from start: [UInt8],
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        try withCursor(on: database) { cursor in
            var entry = try start.isEmpty ? cursor.first() : start.withUnsafeBytes { try cursor.seek(atLeast: $0) }
            while let current = entry, try body(current.key, current.value) { entry = try cursor.next() }
        }
    }
}
