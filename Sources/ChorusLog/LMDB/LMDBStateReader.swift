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
        try body(try key.withUnsafeBytes { try transaction.value(in: log.schema.database(table), for: $0) })
    }

    func forEach(
        in table: StateTable, _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        try transaction.forEachEntry(of: log.schema.database(table), body)
    }
}

extension LMDBTransactionReading {
    /// Visits the entries of `database` in key order until `body` returns false.
    func forEachEntry(
        of database: LMDBDatabase,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        try withCursor(on: database) { cursor in
            var entry = try cursor.first()
            while let current = entry, try body(current.key, current.value) { entry = try cursor.next() }
        }
    }
}
