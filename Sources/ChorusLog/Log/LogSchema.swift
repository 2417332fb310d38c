/// The log's named databases and how their keys and values are laid out.
///
/// - `events`: position (u64 big-endian, so byte order is position order) → the record of ``EventRecordCodec``.
/// - `stream-index`: stream id, NUL, version (u64 big-endian) → position (u64 big-endian).
/// - `stream-heads`: stream id → the stream's last version (u64 little-endian).
/// - `commands`: command id (16 bytes) → first position, last position, stream version (u64 little-endian each).
/// - `meta`: `format` → the storage format version (u32 little-endian).
struct LogSchema: Sendable {
    static let databaseNames = ["events", "stream-index", "stream-heads", "commands", "meta"]
    static let storageFormat: UInt32 = 1
    private static let formatKey = Array("format".utf8)

    let events: LMDBDatabase
    let streamIndex: LMDBDatabase
    let streamHeads: LMDBDatabase
    let commands: LMDBDatabase
    let meta: LMDBDatabase

    init(_ environment: LMDBEnvironment) {
        events = environment.database("events")
        streamIndex = environment.database("stream-index")
        streamHeads = environment.database("stream-heads")
        commands = environment.database("commands")
        meta = environment.database("meta")
    }

    /// Stamps a new log with the storage format, and refuses a log written in another one.
    func checkStorageFormat(_ environment: LMDBEnvironment) throws {
        let stored = try environment.read { transaction in
            try Self.formatKey.withUnsafeBytes { key in
                try transaction.value(in: meta, for: key).map { UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self)) }
            }
        }
        switch stored {
        case Self.storageFormat?:
            return
        case nil:
            try environment.write { transaction in
                try Self.formatKey.withUnsafeBytes { key in
                    try withUnsafeBytes(of: Self.storageFormat.littleEndian) { value in
                        try transaction.put(value, for: key, in: meta)
                    }
                }
            }
        case let other?:
            throw EventLogError(
                .corruptRecord, "\(environment.path) holds log storage format \(other); this build reads \(Self.storageFormat)")
        }
    }

    static func withPositionKey<R>(_ position: LogPosition, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeBytes(of: position.rawValue.bigEndian, body)
    }

    static func position(fromKey key: UnsafeRawBufferPointer) -> LogPosition {
        LogPosition(UInt64(bigEndian: key.loadUnaligned(as: UInt64.self)))
    }

    /// The prefix every stream-index key of `stream` starts with.
    static func streamIndexPrefix(_ stream: StreamID) -> [UInt8] {
        var prefix = Array(stream.rawValue.utf8)
        prefix.append(0)
        return prefix
    }

    static func streamIndexKey(prefix: [UInt8], version: UInt64) -> [UInt8] {
        var key = prefix
        withUnsafeBytes(of: version.bigEndian) { key.append(contentsOf: $0) }
        return key
    }

    static func version(fromStreamIndexKey key: UnsafeRawBufferPointer) -> UInt64 {
        UInt64(bigEndian: key.loadUnaligned(fromByteOffset: key.count - 8, as: UInt64.self))
    }
}
