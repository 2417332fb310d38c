import CLMDB

/// A named database, opened once when the environment opens.
package struct LMDBDatabase: Sendable, Hashable {
    package let name: String
    package let handle: MDB_dbi
}

/// What read-only and write transactions share. The buffers they hand out point into the map and are valid only
/// until the transaction ends: copy what must outlive it.
package protocol LMDBTransactionReading {
    var pointer: OpaquePointer { get }
}

extension LMDBTransactionReading {
    /// The value stored under `key`, or `nil`; a key LMDB cannot hold (empty, or longer than its limit) holds nothing,
    /// so that looking up whatever a client sent is never an error.
    package func value(in database: LMDBDatabase, for key: UnsafeRawBufferPointer) throws(LMDBError)
        -> UnsafeRawBufferPointer?
    {
        guard !key.isEmpty, key.count <= LMDBEnvironment.maximumKeySize else { return nil }
        var keyValue = MDB_val(key)
        var value = MDB_val()
        let code = mdb_get(pointer, database.handle, &keyValue, &value)
        if code == MDB_NOTFOUND { return nil }
        try LMDBError.check(code, "mdb_get(\(database.name))")
        return UnsafeRawBufferPointer(value)
    }

    /// Runs `body` with a cursor on `database`, closed when `body` returns.
    package func withCursor<R>(on database: LMDBDatabase, _ body: (LMDBCursor) throws -> R) throws -> R {
        var cursor: OpaquePointer?
        try LMDBError.check(mdb_cursor_open(pointer, database.handle, &cursor), "mdb_cursor_open(\(database.name))")
        defer { mdb_cursor_close(cursor) }
        return try body(LMDBCursor(pointer: cursor!, database: database))
    }

    /// The number of entries in `database`.
    package func entryCount(_ database: LMDBDatabase) throws(LMDBError) -> Int {
        var stat = MDB_stat()
        try LMDBError.check(mdb_stat(pointer, database.handle, &stat), "mdb_stat(\(database.name))")
        return stat.ms_entries
    }
}

/// A read-only transaction; only ``LMDBEnvironment/read(_:)`` makes one.
package struct LMDBReadTransaction: LMDBTransactionReading {
    package let pointer: OpaquePointer
}

/// The write transaction; only ``LMDBEnvironment/write(durable:_:)`` makes one.
package struct LMDBWriteTransaction: LMDBTransactionReading {
    package let pointer: OpaquePointer

    /// Stores `value` under `key`. `append` promises the key sorts after every key in the database (faster).
    package func put(
        _ value: UnsafeRawBufferPointer,
        for key: UnsafeRawBufferPointer,
        in database: LMDBDatabase,
        append: Bool = false
    ) throws(LMDBError) {
        var keyValue = MDB_val(key)
        var dataValue = MDB_val(value)
        let flags = append ? UInt32(MDB_APPEND) : 0
        try LMDBError.check(
            mdb_put(pointer, database.handle, &keyValue, &dataValue, flags), "mdb_put(\(database.name))")
    }

    /// Reserves `size` bytes under `key` and lets `fill` write them in place, saving a copy.
    package func reserve(
        _ size: Int,
        for key: UnsafeRawBufferPointer,
        in database: LMDBDatabase,
        append: Bool = false,
        fill: (UnsafeMutableRawBufferPointer) -> Void
    ) throws(LMDBError) {
        var keyValue = MDB_val(key)
        var dataValue = MDB_val(mv_size: size, mv_data: nil)
        let flags = UInt32(MDB_RESERVE) | (append ? UInt32(MDB_APPEND) : 0)
        try LMDBError.check(
            mdb_put(pointer, database.handle, &keyValue, &dataValue, flags), "mdb_put(\(database.name), reserve)")
        fill(UnsafeMutableRawBufferPointer(start: dataValue.mv_data, count: size))
    }

    /// Runs `body` with a cursor for storing keys in ascending order (``LMDBWriteCursor``), closed when `body`
    /// returns.
    package func withWriteCursor<R>(on database: LMDBDatabase, _ body: (LMDBWriteCursor) throws -> R) throws -> R {
        try withCursor(on: database) { try body(LMDBWriteCursor(pointer: $0.pointer, database: database)) }
    }

    /// Removes every entry of `database`, keeping the database.
    package func empty(_ database: LMDBDatabase) throws(LMDBError) {
        try LMDBError.check(mdb_drop(pointer, database.handle, 0), "mdb_drop(\(database.name))")
    }

    /// Deletes the named database `name`, which the environment was not opened with, and frees its pages; returns
    /// whether there was one. For a database a newer storage format no longer has.
    @discardableResult
    package func dropDatabase(named name: String) throws(LMDBError) -> Bool {
        var handle: MDB_dbi = 0
        let code = mdb_dbi_open(pointer, name, 0, &handle)
        if code == MDB_NOTFOUND { return false }
        try LMDBError.check(code, "mdb_dbi_open(\(name))")
        try LMDBError.check(mdb_drop(pointer, handle, 1), "mdb_drop(\(name))")
        return true
    }

    /// Removes `key`; returns whether it was there.
    @discardableResult
    package func delete(_ key: UnsafeRawBufferPointer, in database: LMDBDatabase) throws(LMDBError) -> Bool {
        var keyValue = MDB_val(key)
        let code = mdb_del(pointer, database.handle, &keyValue, nil)
        if code == MDB_NOTFOUND { return false }
        try LMDBError.check(code, "mdb_del(\(database.name))")
        return true
    }
}

/// A cursor inside one transaction.
package struct LMDBCursor {
    package typealias Entry = (key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)

    package let pointer: OpaquePointer
    package let database: LMDBDatabase

    package func first() throws(LMDBError) -> Entry? { try move(MDB_FIRST) }
    package func last() throws(LMDBError) -> Entry? { try move(MDB_LAST) }
    package func next() throws(LMDBError) -> Entry? { try move(MDB_NEXT) }
    package func previous() throws(LMDBError) -> Entry? { try move(MDB_PREV) }

    /// Positions at the first key greater than or equal to `key`.
    package func seek(atLeast key: UnsafeRawBufferPointer) throws(LMDBError) -> Entry? {
        var keyValue = MDB_val(key)
        var dataValue = MDB_val()
        let code = mdb_cursor_get(pointer, &keyValue, &dataValue, MDB_SET_RANGE)
        if code == MDB_NOTFOUND { return nil }
        try LMDBError.check(code, "mdb_cursor_get(\(database.name), MDB_SET_RANGE)")
        return (UnsafeRawBufferPointer(keyValue), UnsafeRawBufferPointer(dataValue))
    }

    /// Positions at the last key less than or equal to `key`.
    package func seek(atMost key: UnsafeRawBufferPointer) throws(LMDBError) -> Entry? {
        guard let atLeast = try seek(atLeast: key) else { return try last() }
        return atLeast.key.elementsEqual(key) ? atLeast : try previous()
    }

    private func move(_ operation: MDB_cursor_op) throws(LMDBError) -> Entry? {
        var keyValue = MDB_val()
        var dataValue = MDB_val()
        let code = mdb_cursor_get(pointer, &keyValue, &dataValue, operation)
        if code == MDB_NOTFOUND { return nil }
        try LMDBError.check(code, "mdb_cursor_get(\(database.name), op \(operation.rawValue))")
        return (UnsafeRawBufferPointer(keyValue), UnsafeRawBufferPointer(dataValue))
    }
}

/// A cursor that stores: keys put in ascending order each land on the leaf page the last one did or the next, and
/// LMDB then searches that page only instead of the tree from its root (`mdb_put` opens a fresh cursor and descends
/// every time). Any order is correct; ascending is what makes it cheap.
package struct LMDBWriteCursor {
    let pointer: OpaquePointer
    let database: LMDBDatabase

    /// The same cursor, to look up and move with: a put after a seek finds its page from where the seek left it.
    package var reading: LMDBCursor { LMDBCursor(pointer: pointer, database: database) }

    /// Stores `value` under `key`, replacing what was there.
    package func put(_ value: UnsafeRawBufferPointer, for key: UnsafeRawBufferPointer) throws(LMDBError) {
        var keyValue = MDB_val(key)
        var dataValue = MDB_val(value)
        try LMDBError.check(
            mdb_cursor_put(pointer, &keyValue, &dataValue, 0), "mdb_cursor_put(\(database.name))")
    }

    /// Stores `value` under `key`, which must sort after every key in the database (`MDB_APPEND`: no search, and
    /// full pages where a put in the middle of one would leave two half full). Fails with `MDB_KEYEXIST` otherwise.
    package func append(_ value: UnsafeRawBufferPointer, for key: UnsafeRawBufferPointer) throws(LMDBError) {
        var keyValue = MDB_val(key)
        var dataValue = MDB_val(value)
        try LMDBError.check(
            mdb_cursor_put(pointer, &keyValue, &dataValue, UInt32(MDB_APPEND)),
            "mdb_cursor_put(\(database.name), append)")
    }

    /// Removes `key`; returns whether it was there.
    package func delete(_ key: UnsafeRawBufferPointer) throws(LMDBError) -> Bool {
        var keyValue = MDB_val(key)
        var dataValue = MDB_val()
        let code = mdb_cursor_get(pointer, &keyValue, &dataValue, MDB_SET)
        if code == MDB_NOTFOUND { return false }
        try LMDBError.check(code, "mdb_cursor_get(\(database.name))")
        try LMDBError.check(mdb_cursor_del(pointer, 0), "mdb_cursor_del(\(database.name))")
        return true
    }
}

extension MDB_val {
    /// A view of `buffer` for LMDB, which takes non-const pointers but does not write through keys.
    package init(_ buffer: UnsafeRawBufferPointer) {
        self.init(mv_size: buffer.count, mv_data: UnsafeMutableRawPointer(mutating: buffer.baseAddress))
    }
}

extension UnsafeRawBufferPointer {
    package init(_ value: MDB_val) {
        self.init(start: value.mv_data, count: value.mv_size)
    }
}
