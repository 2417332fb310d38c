import CLMDB
#if canImport(Glibc)
import Glibc
#endif

/// A named database, opened once when the environment opens.
struct LMDBDatabase: Sendable, Hashable {
    let name: String
    let handle: MDB_dbi
}

/// What read-only and write transactions share. The buffers they hand out point into the map and are valid only
/// until the transaction ends: copy what must outlive it.
protocol LMDBTransactionReading {
    var pointer: OpaquePointer { get }
}

extension LMDBTransactionReading {
    /// The value stored under `key`, or `nil`.
    func value(in database: LMDBDatabase, for key: UnsafeRawBufferPointer) throws(LMDBError) -> UnsafeRawBufferPointer? {
        var keyValue = MDB_val(key)
        var value = MDB_val()
        let code = mdb_get(pointer, database.handle, &keyValue, &value)
        if code == MDB_NOTFOUND { return nil }
        try LMDBError.check(code, "mdb_get(\(database.name))")
        return UnsafeRawBufferPointer(value)
    }

    /// Runs `body` with a cursor on `database`, closed when `body` returns.
    func withCursor<R>(on database: LMDBDatabase, _ body: (LMDBCursor) throws -> R) throws -> R {
        var cursor: OpaquePointer?
        try LMDBError.check(mdb_cursor_open(pointer, database.handle, &cursor), "mdb_cursor_open(\(database.name))")
        defer { mdb_cursor_close(cursor) }
        return try body(LMDBCursor(pointer: cursor!, database: database))
    }

    /// The number of entries in `database`.
    func entryCount(_ database: LMDBDatabase) throws(LMDBError) -> Int {
        var stat = MDB_stat()
        try LMDBError.check(mdb_stat(pointer, database.handle, &stat), "mdb_stat(\(database.name))")
        return stat.ms_entries
    }
}

/// A read-only transaction; only ``LMDBEnvironment/read(_:)`` makes one.
struct LMDBReadTransaction: LMDBTransactionReading {
    let pointer: OpaquePointer
}

/// The write transaction; only ``LMDBEnvironment/write(durable:_:)`` makes one.
struct LMDBWriteTransaction: LMDBTransactionReading {
    let pointer: OpaquePointer

    /// Stores `value` under `key`. `append` promises the key sorts after every key in the database (faster).
    func put(
        _ value: UnsafeRawBufferPointer,
        for key: UnsafeRawBufferPointer,
        in database: LMDBDatabase,
        append: Bool = false
    ) throws(LMDBError) {
        var keyValue = MDB_val(key)
        var dataValue = MDB_val(value)
        let flags = append ? UInt32(MDB_APPEND) : 0
        try LMDBError.check(mdb_put(pointer, database.handle, &keyValue, &dataValue, flags), "mdb_put(\(database.name))")
    }

    /// Reserves `size` bytes under `key` and lets `fill` write them in place, saving a copy.
    func reserve(
        _ size: Int,
        for key: UnsafeRawBufferPointer,
        in database: LMDBDatabase,
        append: Bool = false,
        fill: (UnsafeMutableRawBufferPointer) -> Void
    ) throws(LMDBError) {
        var keyValue = MDB_val(key)
        var dataValue = MDB_val(mv_size: size, mv_data: nil)
        let flags = UInt32(MDB_RESERVE) | (append ? UInt32(MDB_APPEND) : 0)
        try LMDBError.check(mdb_put(pointer, database.handle, &keyValue, &dataValue, flags), "mdb_put(\(database.name), reserve)")
        fill(UnsafeMutableRawBufferPointer(start: dataValue.mv_data, count: size))
    }

    /// Adds `element` to the sorted set under `key` in an `MDB_DUPSORT` database; returns false if it was there.
    /// `append` promises that `element` sorts after every element of the set (faster); if it does not, the set is
    /// left as it was and the answer is false.
    func insert(
        _ element: UnsafeRawBufferPointer, intoSetAt key: UnsafeRawBufferPointer, in database: LMDBDatabase,
        append: Bool = false
    ) throws(LMDBError) -> Bool {
        var keyValue = MDB_val(key)
        var dataValue = MDB_val(element)
        let flags = UInt32(MDB_NODUPDATA) | (append ? UInt32(MDB_APPENDDUP) : 0)
        let code = mdb_put(pointer, database.handle, &keyValue, &dataValue, flags)
        if code == MDB_KEYEXIST { return false }
        try LMDBError.check(code, "mdb_put(\(database.name), set element)")
        return true
    }

    /// Stores a whole sorted set under `key`, which holds none yet: `elements` are `elementSize` bytes each, back to
    /// back, in order and distinct. One call for the whole set (`MDB_MULTIPLE`), where element-wise inserts search
    /// the set once each. `append` promises that `key` sorts after every key in the database.
    func insertSet(
        _ elements: UnsafeRawBufferPointer, elementSize: Int, at key: UnsafeRawBufferPointer, in database: LMDBDatabase,
        append: Bool
    ) throws {
        let count = elements.count / elementSize
        guard count > 0 else { return }
        try withCursor(on: database) { cursor in
            var keyValue = MDB_val(key)
            var values = [
                MDB_val(mv_size: elementSize, mv_data: UnsafeMutableRawPointer(mutating: elements.baseAddress)),
                MDB_val(mv_size: count, mv_data: nil),
            ]
            // The elements are in order and the set is empty: each is appended to it (MDB_APPENDDUP), unsearched.
            let flags = UInt32(MDB_MULTIPLE | MDB_APPENDDUP) | (append ? UInt32(MDB_APPEND) : 0)
            try LMDBError.check(mdb_cursor_put(cursor.pointer, &keyValue, &values, flags), "mdb_cursor_put(\(database.name), set)")
            guard values[1].mv_size == count else {
                throw LMDBError(EIO, "mdb_cursor_put(\(database.name), set) stored \(values[1].mv_size) of \(count) elements")
            }
        }
    }

    /// Removes `element` from the sorted set under `key`; returns whether it was there.
    func remove(
        _ element: UnsafeRawBufferPointer, fromSetAt key: UnsafeRawBufferPointer, in database: LMDBDatabase
    ) throws(LMDBError) -> Bool {
        var keyValue = MDB_val(key)
        var dataValue = MDB_val(element)
        let code = mdb_del(pointer, database.handle, &keyValue, &dataValue)
        if code == MDB_NOTFOUND { return false }
        try LMDBError.check(code, "mdb_del(\(database.name), set element)")
        return true
    }

    /// Removes every entry of `database`, keeping the database.
    func empty(_ database: LMDBDatabase) throws(LMDBError) {
        try LMDBError.check(mdb_drop(pointer, database.handle, 0), "mdb_drop(\(database.name))")
    }

    /// Removes `key`; returns whether it was there.
    @discardableResult
    func delete(_ key: UnsafeRawBufferPointer, in database: LMDBDatabase) throws(LMDBError) -> Bool {
        var keyValue = MDB_val(key)
        let code = mdb_del(pointer, database.handle, &keyValue, nil)
        if code == MDB_NOTFOUND { return false }
        try LMDBError.check(code, "mdb_del(\(database.name))")
        return true
    }
}

/// A cursor inside one transaction.
struct LMDBCursor {
    typealias Entry = (key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)

    let pointer: OpaquePointer
    let database: LMDBDatabase

    func first() throws(LMDBError) -> Entry? { try move(MDB_FIRST) }
    func last() throws(LMDBError) -> Entry? { try move(MDB_LAST) }
    func next() throws(LMDBError) -> Entry? { try move(MDB_NEXT) }
    func previous() throws(LMDBError) -> Entry? { try move(MDB_PREV) }

    /// Positions at the first key greater than or equal to `key`.
    func seek(atLeast key: UnsafeRawBufferPointer) throws(LMDBError) -> Entry? {
        var keyValue = MDB_val(key)
        var dataValue = MDB_val()
        let code = mdb_cursor_get(pointer, &keyValue, &dataValue, MDB_SET_RANGE)
        if code == MDB_NOTFOUND { return nil }
        try LMDBError.check(code, "mdb_cursor_get(\(database.name), MDB_SET_RANGE)")
        return (UnsafeRawBufferPointer(keyValue), UnsafeRawBufferPointer(dataValue))
    }

    /// Positions at the last key less than or equal to `key`.
    func seek(atMost key: UnsafeRawBufferPointer) throws(LMDBError) -> Entry? {
        guard let atLeast = try seek(atLeast: key) else { return try last() }
        return atLeast.key.elementsEqual(key) ? atLeast : try previous()
    }

    // Sorted sets (`MDB_DUPSORT` databases): the elements under one key.

    /// Positions at the first element at or after `element` in the set under `key`.
    func seek(set key: UnsafeRawBufferPointer, atLeast element: UnsafeRawBufferPointer) throws(LMDBError) -> Entry? {
        var keyValue = MDB_val(key)
        var dataValue = MDB_val(element)
        let code = mdb_cursor_get(pointer, &keyValue, &dataValue, MDB_GET_BOTH_RANGE)
        if code == MDB_NOTFOUND { return nil }
        try LMDBError.check(code, "mdb_cursor_get(\(database.name), MDB_GET_BOTH_RANGE)")
        return (UnsafeRawBufferPointer(keyValue), UnsafeRawBufferPointer(dataValue))
    }

    /// Positions at the first or last element of the set under `key`; nil when the set is empty.
    func seek(set key: UnsafeRawBufferPointer, toLast: Bool) throws(LMDBError) -> Entry? {
        var keyValue = MDB_val(key)
        var dataValue = MDB_val()
        let code = mdb_cursor_get(pointer, &keyValue, &dataValue, MDB_SET)
        if code == MDB_NOTFOUND { return nil }
        try LMDBError.check(code, "mdb_cursor_get(\(database.name), MDB_SET)")
        return try move(toLast ? MDB_LAST_DUP : MDB_FIRST_DUP)
    }

    /// Positions at the last element at or before `element` in the set under `key`.
    func seek(set key: UnsafeRawBufferPointer, atMost element: UnsafeRawBufferPointer) throws(LMDBError) -> Entry? {
        guard let atLeast = try seek(set: key, atLeast: element) else { return try seek(set: key, toLast: true) }
        return atLeast.value.elementsEqual(element) ? atLeast : try previousInSet()
    }

    func nextInSet() throws(LMDBError) -> Entry? { try move(MDB_NEXT_DUP) }
    func previousInSet() throws(LMDBError) -> Entry? { try move(MDB_PREV_DUP) }

    private func move(_ operation: MDB_cursor_op) throws(LMDBError) -> Entry? {
        var keyValue = MDB_val()
        var dataValue = MDB_val()
        let code = mdb_cursor_get(pointer, &keyValue, &dataValue, operation)
        if code == MDB_NOTFOUND { return nil }
        try LMDBError.check(code, "mdb_cursor_get(\(database.name), op \(operation.rawValue))")
        return (UnsafeRawBufferPointer(keyValue), UnsafeRawBufferPointer(dataValue))
    }
}

extension MDB_val {
    /// A view of `buffer` for LMDB, which takes non-const pointers but does not write through keys.
    init(_ buffer: UnsafeRawBufferPointer) {
        self.init(mv_size: buffer.count, mv_data: UnsafeMutableRawPointer(mutating: buffer.baseAddress))
    }
}

extension UnsafeRawBufferPointer {
    init(_ value: MDB_val) {
        self.init(start: value.mv_data, count: value.mv_size)
    }
}
