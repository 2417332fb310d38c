/// A key-value table of state kept with the log and changed in the same write as the events that decide it: the
/// domain's decision state (who registered which e-mail, who follows whom, idempotency keys). A log is opened with the
/// names of its state tables (`LMDBEventLog.Configuration.stateTables` in `ChorusLMDBLog`).
public struct StateTable: Sendable, Hashable, CustomStringConvertible {
    public let name: String

    public init(_ name: String) { self.name = name }

    public var description: String { name }
}

/// The decision state as one read sees it: every table as one position of the log left it. Buffers handed to the
/// closures are valid only inside them.
public protocol StateReader {
    /// The position of the last event the state reflects.
    var position: LogPosition { get throws }

    /// Calls `body` with the value stored under `key`, or nil; a key the log cannot hold (empty, or over 511 bytes)
    /// holds nothing.
    func withValue<R>(for key: [UInt8], in table: StateTable, _ body: (UnsafeRawBufferPointer?) throws -> R) throws -> R

    /// Visits the entries of `table` in key order, from the first key not below `start`, until `body` returns false.
    func forEach(
        in table: StateTable, from start: [UInt8],
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws
}

/// Stores `value` under `key` in a table, or removes `key` given nil (``StateWriter/writeInKeyOrder(in:_:)``). The
/// bytes are the caller's, lent for the call.
public typealias StateKeyWrite = (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer?) throws -> Void

/// Stores `value` under `key`, which sorts after every key of the table (``StateWriter/appendInKeyOrder(in:_:)``).
public typealias StateKeyAppend = (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Void

/// The decision state inside a write of the log: what changes here commits with that write's events.
public protocol StateWriter: StateReader {
    /// Stores `value` under `key`.
    func put(_ value: [UInt8], for key: [UInt8], in table: StateTable) throws

    /// Removes `key`; returns whether it was there.
    @discardableResult
    func delete(_ key: [UInt8], in table: StateTable) throws -> Bool

    /// Calls `body` with the function that stores a value under a key in `table` (removes the key, given nil), for
    /// changes that come in ascending key order: a store may then find each key's place from the last one's rather
    /// than afresh (an import writes its batches' changes so).
    func writeInKeyOrder(
        in table: StateTable, _ body: (_ write: StateKeyWrite) throws -> Void
    ) throws

    /// Calls `body` with the function that stores a value under a key in `table`, for keys each after every key the
    /// table holds (an empty table filled in key order): a store may then add each at the end without a search.
    func appendInKeyOrder(
        in table: StateTable, _ body: (_ append: StateKeyAppend) throws -> Void
    ) throws
}

extension StateWriter {
    /// Each change through ``put(_:for:in:)`` or ``delete(_:in:)``.
    public func writeInKeyOrder(
        in table: StateTable, _ body: (_ write: StateKeyWrite) throws -> Void
    ) throws {
        try body { key, value in
            if let value {
                try put(Array(value), for: Array(key), in: table)
            } else {
                try delete(Array(key), in: table)
            }
        }
    }

    /// Each through ``put(_:for:in:)``.
    public func appendInKeyOrder(
        in table: StateTable, _ body: (_ append: StateKeyAppend) throws -> Void
    ) throws {
        try body { key, value in try put(Array(value), for: Array(key), in: table) }
    }
}

extension StateReader {
    /// Visits every entry of `table` in key order until `body` returns false.
    public func forEach(
        in table: StateTable, _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        try forEach(in: table, from: [], body)
    }

    /// Visits the entries of `table` whose keys start with `prefix`, in key order, until `body` returns false.
    public func forEach(
        in table: StateTable, prefix: [UInt8],
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        try forEach(in: table, from: prefix) { key, value in
            key.starts(with: prefix) ? try body(key, value) : false
        }
    }

    /// A copy of the value stored under `key`.
    public func value(for key: [UInt8], in table: StateTable) throws -> [UInt8]? {
        try withValue(for: key, in: table) { $0.map(Array.init) }
    }
}
