#if canImport(Glibc)
import Glibc
#endif

/// A table of a ``KeyValueStore``, or one of the state tables kept in the event log's own environment.
package struct StoreTable: Hashable, Sendable, CustomStringConvertible {
    package let database: LMDBDatabase

    package var name: String { database.name }
    package var description: String { database.name }
}

/// A transaction on key-value tables, valid only inside the closure it is handed to; buffers it hands out point into
/// the map and are valid only until that closure returns. Keys are at most 511 bytes.
package struct StoreTransaction {
    package static let maximumKeySize = LMDBEnvironment.maximumKeySize

    private enum Access {
        case read(LMDBReadTransaction)
        case write(LMDBWriteTransaction)
    }

    private let access: Access
    /// Tables being loaded in key order (see ``loadingInKeyOrder(_:spillingInto:_:)``), and a bit per table handle
    /// to tell them apart without touching the load on every read and write. Unmanaged: `loadingInKeyOrder` holds the
    /// load for as long as this transaction can be used, and a retain and release per write were a tenth of a build's
    /// reference counting.
    private var load: Unmanaged<KeyOrderLoad>?
    private var loadingHandles: UInt64 = 0
    /// Where reads and writes are recorded (see ``recordingTouches(into:_:)``); nil almost always. Unmanaged for the
    /// same reason as `load`.
    private var touches: Unmanaged<TouchedKeys>?

    package init(_ transaction: LMDBReadTransaction) { access = .read(transaction) }
    package init(_ transaction: LMDBWriteTransaction) { access = .write(transaction) }

    package var isWritable: Bool {
        if case .write = access { true } else { false }
    }

    private var reading: any LMDBTransactionReading {
        switch access {
        case .read(let transaction): transaction
        case .write(let transaction): transaction
        }
    }

    private func isLoading(_ table: StoreTable) -> Bool {
        loadingHandles != 0 && table.database.handle < 64 && loadingHandles & (1 << table.database.handle) != 0
    }

    /// If `table` is being loaded in key order, merges what was written to it so far, which is not in it yet.
    private func readable(_ table: StoreTable) throws {
        if isLoading(table), let load, case .write(let transaction) = access {
            try load._withUnsafeGuaranteedRef { try $0.flush(table, Self.sink(transaction)) }
        }
    }

    /// Where a key-order load's merged writes go.
    private static func sink(_ transaction: LMDBWriteTransaction) -> KeyOrderLoad.Sink {
        { table, key, value, append in
            if let value {
                try transaction.put(value, for: key, in: table.database, append: append)
            } else {
                try transaction.delete(key, in: table.database)
            }
        }
    }

    private func writing(_ operation: String) throws(LMDBError) -> LMDBWriteTransaction {
        guard case .write(let transaction) = access else {
            throw LMDBError(EACCES, "\(operation) in a read-only transaction")
        }
        return transaction
    }

    /// Runs `body` with this transaction recording into `touched` which partitions of which tables it reads, or, in
    /// a write transaction, writes (see ``TouchedKeys``).
    package func recordingTouches<R>(into touched: TouchedKeys, _ body: (StoreTransaction) throws -> R) rethrows -> R {
        var recording = self
        recording.touches = Unmanaged.passUnretained(touched)
        // `recording` refers to `touched` unretained: it lives until here.
        return try withExtendedLifetime(touched) { try body(recording) }
    }

    // MARK: Reading

    /// A copy of the value stored under `key`.
    package func value(for key: [UInt8], in table: StoreTable) throws -> [UInt8]? {
        try withValue(for: key, in: table) { $0.map(Array.init) }
    }

    /// Calls `body` with the value stored under `key` (nil when absent), without copying it.
    package func withValue<R>(for key: [UInt8], in table: StoreTable, _ body: (UnsafeRawBufferPointer?) throws -> R)
        throws -> R
    {
        try readable(table)
        let found = try key.withUnsafeBytes { key in
            touches?._withUnsafeGuaranteedRef { $0.read(key, in: table) }
            return try reading.value(in: table.database, for: key)
        }
        return try body(found)
    }

    /// The value stored under `key`, in place: valid until the closure this transaction was handed to returns (in a
    /// write transaction, until the next write).
    package func valueInPlace(for key: UnsafeRawBufferPointer, in table: StoreTable) throws -> UnsafeRawBufferPointer? {
        try readable(table)
        touches?._withUnsafeGuaranteedRef { $0.read(key, in: table) }
        return try reading.value(in: table.database, for: key)
    }

    /// `key` as the table holds it, in place (valid as ``valueInPlace(for:in:)``'s answer is); nil when absent.
    package func storedKey(_ key: [UInt8], in table: StoreTable) throws -> UnsafeRawBufferPointer? {
        try readable(table)
        return try key.withUnsafeBytes { key in
            touches?._withUnsafeGuaranteedRef { $0.read(key, in: table) }
            return try reading.withCursor(on: table.database) { cursor in
                guard let found = try cursor.seek(atLeast: key), found.key.elementsEqual(key) else { return nil }
                return found.key
            }
        }
    }

    /// Visits entries in key order from the first key at or after `start` (forward) or at or before it (backward),
    /// until `body` returns false.
    package func scan(
        _ table: StoreTable, from start: [UInt8] = [], direction: ScanDirection = .forward,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        try scan(table, within: [], from: start, direction: direction, body)
    }

    /// Visits the entries whose keys start with `prefix` in key order, from the first at or after `start` (forward)
    /// or at or before it (backward), until `body` returns false or the keys leave `prefix`; `start` begins with
    /// `prefix`. A scan confined to a prefix depends on that prefix's keys only (``TouchedKeys``).
    package func scan(
        _ table: StoreTable, within prefix: [UInt8], from start: [UInt8], direction: ScanDirection,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        try readable(table)
        try prefix.withUnsafeBytes { prefix in
            touches?._withUnsafeGuaranteedRef { $0.scanned(prefix: prefix, in: table) }
            try reading.withCursor(on: table.database) { cursor in
                var entry: LMDBCursor.Entry?
                switch direction {
                case .forward:
                    entry = try start.isEmpty ? cursor.first() : start.withUnsafeBytes { try cursor.seek(atLeast: $0) }
                case .backward:
                    entry = try start.isEmpty ? cursor.last() : start.withUnsafeBytes { try cursor.seek(atMost: $0) }
                }
                while let current = entry, current.key.starts(withBytes: prefix), try body(current.key, current.value) {
                    entry = try direction == .forward ? cursor.next() : cursor.previous()
                }
            }
        }
    }

    /// Visits, in key order, the entries whose keys start with `prefix`, until `body` returns false.
    package func scan(
        _ table: StoreTable, prefix: [UInt8],
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        try readable(table)
        try prefix.withUnsafeBytes { prefix in
            touches?._withUnsafeGuaranteedRef { $0.scanned(prefix: prefix, in: table) }
            try reading.withCursor(on: table.database) { cursor in
                var entry = try prefix.isEmpty ? cursor.first() : cursor.seek(atLeast: prefix)
                while let current = entry, current.key.starts(withBytes: prefix), try body(current.key, current.value) {
                    entry = try cursor.next()
                }
            }
        }
    }

    /// The number of entries in `table`.
    package func count(_ table: StoreTable) throws -> Int {
        try readable(table)
        touches?._withUnsafeGuaranteedRef { $0.readWhole(table) }
        return try reading.entryCount(table.database)
    }

    // MARK: Writing

    /// Stores `value` under `key`. `append` promises that `key` sorts after every key of the table, which saves
    /// searching for it and fills pages completely: for tables built in key order.
    package func put(_ value: [UInt8], for key: [UInt8], in table: StoreTable, append: Bool = false) throws {
        let transaction = try writing("put")
        if let touches { key.withUnsafeBytes { key in touches._withUnsafeGuaranteedRef { $0.wrote(key, in: table) } } }
        if isLoading(table), let load {
            return try load._withUnsafeGuaranteedRef { load in
                try key.withUnsafeBytes { key in try value.withUnsafeBytes { try load.put($0, for: key, in: table) } }
            }
        }
        try key.withUnsafeBytes { key in
            try value.withUnsafeBytes { value in
                try transaction.put(value, for: key, in: table.database, append: append)
            }
        }
    }

    /// Removes `key`; returns whether it was there.
    @discardableResult
    package func delete(_ key: [UInt8], in table: StoreTable) throws -> Bool {
        let transaction = try writing("delete")
        if let touches { key.withUnsafeBytes { key in touches._withUnsafeGuaranteedRef { $0.wrote(key, in: table) } } }
        if isLoading(table), let load {
            // Whether the key was there is not known before the load ends.
            try load._withUnsafeGuaranteedRef { load in try key.withUnsafeBytes { try load.delete($0, in: table) } }
            return false
        }
        return try key.withUnsafeBytes { try transaction.delete($0, in: table.database) }
    }

    /// Runs `body` with a transaction in which `tables`, empty, are loaded in key order: what `body` writes to them
    /// is collected, sorted (on a thread of its own, spilling runs into `directory`) and appended to them when `body`
    /// returns, in a fraction of the time of writes in random key order. Of several writes to one key the last one
    /// counts, as usual, and a delete cannot say whether its key was there. Reading one of these tables inside `body`
    /// first merges what was written to it so far, which costs about as much as all those writes: for rare reads.
    package func loadingInKeyOrder<R>(
        _ tables: [StoreTable], spillingInto directory: String, _ body: (StoreTransaction) throws -> R
    ) throws -> R {
        let transaction = try writing("loadingInKeyOrder")
        for table in tables where try count(table) > 0 {
            throw LMDBError(EINVAL, "\(table.name) is not empty, so it cannot be loaded in key order")
        }
        guard tables.allSatisfy({ $0.database.handle < 64 }) else {
            throw LMDBError(EINVAL, "loadingInKeyOrder takes tables of the first 64 opened")
        }
        let load = KeyOrderLoad(tables: tables, spillingInto: directory)
        var loading = self
        loading.load = Unmanaged.passUnretained(load)
        for table in tables { loading.loadingHandles |= 1 << table.database.handle }
        // `loading` refers to the load unretained: it lives until here.
        return try withExtendedLifetime(load) {
            let result: R
            do {
                result = try body(loading)
            } catch {
                load.abandon()
                throw error
            }
            try load.finish(Self.sink(transaction))
            return result
        }
    }

    /// Removes every entry of `table`.
    package func removeAll(in table: StoreTable) throws {
        let transaction = try writing("removeAll")
        touches?._withUnsafeGuaranteedRef { $0.changedEverything() }
        try transaction.empty(table.database)
    }
}

extension UnsafeRawBufferPointer {
    /// Whether these bytes begin with `prefix` (compared with `memcmp`, where `starts(with:)` goes byte by byte).
    package func starts(withBytes prefix: UnsafeRawBufferPointer) -> Bool {
        count >= prefix.count && (prefix.isEmpty || memcmp(baseAddress!, prefix.baseAddress!, prefix.count) == 0)
    }
}

/// Which way a scan walks a table's keys.
package enum ScanDirection: Sendable {
    /// Ascending keys, from the first at or after the start.
    case forward
    /// Descending keys, from the last at or before the start.
    case backward
}
