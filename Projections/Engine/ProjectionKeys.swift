import ChorusDomain
import ChorusLog
import ChorusStorage

/// Keys of read-model tables: parts joined by NUL (ids never contain it), positions as 8 bytes big-endian so that
/// byte order is log order.
struct ProjectionKey {
    private(set) var bytes: [UInt8] = []

    init() { bytes.reserveCapacity(64) }

    init(_ id: some ChorusIdentifier) {
        self.init()
        append(id)
    }

    /// A key that begins with an id's UTF-8 as stored (a table's key or value).
    init(bytes id: UnsafeRawBufferPointer) {
        self.init()
        bytes.append(contentsOf: id)
    }

    static func position(_ position: LogPosition) -> [UInt8] {
        var key = ProjectionKey()
        key.append(position)
        return key.bytes
    }

    /// Calls `body` with the key ``position(_:)`` makes, built on the stack instead.
    static func withPositionKey<R>(_ position: LogPosition, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R
    {
        try withUnsafeBytes(of: position.rawValue.bigEndian, body)
    }

    mutating func append(_ id: some ChorusIdentifier) {
        if !bytes.isEmpty { bytes.append(0) }
        // In place where the id's storage allows it, which saves a retain and release per key.
        let utf8 = id.rawValue.utf8
        if utf8.withContiguousStorageIfAvailable({ bytes.append(contentsOf: $0) }) == nil {
            bytes.append(contentsOf: utf8)
        }
    }

    /// Appends an id's UTF-8 as stored (a table's key or value).
    mutating func append(bytes id: UnsafeRawBufferPointer) {
        if !bytes.isEmpty { bytes.append(0) }
        bytes.append(contentsOf: id)
    }

    mutating func append(_ position: LogPosition) {
        if !bytes.isEmpty { bytes.append(0) }
        withUnsafeBytes(of: position.rawValue.bigEndian) { bytes.append(contentsOf: $0) }
    }

    /// The key with a trailing separator: every longer key of the same owner starts with it.
    func prefix() -> [UInt8] { bytes + [0] }

    /// Reads the position stored as 8 big-endian bytes at `offset`.
    static func position(in bytes: UnsafeRawBufferPointer, at offset: Int) -> LogPosition {
        LogPosition(UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
    }

    /// The user id that ends a tab key made of `prefix`, a position, and that user's id.
    static func user(afterPositionIn key: UnsafeRawBufferPointer, prefixCount: Int) -> UserID {
        let start = prefixCount + 9
        return UserID(unchecked: string(key, from: start, count: key.count - start))
    }

    static func string(_ bytes: UnsafeRawBufferPointer, from offset: Int, count: Int) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count]), as: UTF8.self)
    }
}

/// A position stored as a value.
enum PositionValue {
    static func encode(_ position: LogPosition) -> [UInt8] { ProjectionKey.position(position) }
    static func decode(_ bytes: UnsafeRawBufferPointer) -> LogPosition { ProjectionKey.position(in: bytes, at: 0) }
}

extension StoreTransaction {
    /// The position stored as the value under `key`, if any.
    func position(under key: [UInt8], in table: StoreTable) throws -> LogPosition? {
        try withValue(for: key, in: table) { $0.map(PositionValue.decode) }
    }
}
