import ChorusLog
import ChorusStorage

/// The log's databases and how their keys and values are laid out.
///
/// - events, in LMDB's main database: 0xFF, then the position (u64 big-endian, so byte order is position order) → the
///   record of ``EventRecordCodec``. The main database also holds one record per named database, keyed by its ASCII
///   name; the 0xFF prefix sorts every event after those, so appends still go at the end (`MDB_APPEND`) and an append
///   commit touches exactly the pages a plain LMDB put would. A named database of its own would cost one more page
///   per commit: its record in the main database, rewritten whenever its root page moves.
/// - `stream-index`: stream id, NUL, version (u64 big-endian) → position (u64 big-endian). A stream's last entry is
///   its head: the version appends to it are checked against.
/// - `commands`: command id (16 bytes) → first position, last position, stream version (u64 little-endian each).
/// - `meta`: `format` → the storage format version (u32 little-endian); `indexed-through` → the last position whose
///   stream-index and commands entries are written (u64 little-endian).
/// - `state.<name>`: the state tables (``LMDBEventLog/Configuration/stateTables``), written by decisions.
///
/// Only `events` (and the state tables) are written by the fsync'd append; the other databases index the events,
/// written in batches by the writer (see ``UnindexedTail``), and are complete up to `indexed-through`.
struct LogSchema: Sendable {
    private static let indexNames = ["stream-index", "commands", "meta"]

    /// Every named database of a log with these state tables.
    static func databaseNames(stateTables: [String]) -> [String] { indexNames + stateTables.map { "state." + $0 } }
    /// Formats: 1, with a `stream-heads` table (stream id → last version) beside the stream index, which holds the
    /// same thing in each stream's last key; 2, without it (for an import of the 1M-event demo log, it took about a
    /// twentieth of the time and a sixth of the file).
    static let storageFormat: UInt32 = 2
    /// The tables of older formats that this one dropped, deleted when a writer first opens such a log.
    private static let retiredDatabases = ["stream-heads"]
    private static let formatKey = Array("format".utf8)
    static let indexedThroughKey = Array("indexed-through".utf8)

    let events: LMDBDatabase
    let streamIndex: LMDBDatabase
    let commands: LMDBDatabase
    let meta: LMDBDatabase
    /// By name.
    private let stateTables: [String: LMDBDatabase]

    /// Whether the log's tables were ever made in `environment`: opened for reading, a log whose first write never
    /// finished (a full disk) has none.
    static func isCreated(in environment: LMDBEnvironment) -> Bool {
        indexNames.allSatisfy { environment.existingDatabase($0) != nil }
    }

    init(_ environment: LMDBEnvironment, stateTables: [String]) {
        events = environment.mainDatabase
        streamIndex = environment.database("stream-index")
        commands = environment.database("commands")
        meta = environment.database("meta")
        self.stateTables = Dictionary(
            uniqueKeysWithValues: stateTables.compactMap { name in
                environment.existingDatabase("state." + name).map { (name, $0) }
            })
    }

    /// The database of a state table; one the log was not opened with is a programming error. A log opened for
    /// writing has every one.
    func database(_ table: StateTable) -> LMDBDatabase {
        guard let database = stateTables[table.name] else {
            preconditionFailure("the log was not opened with the state table \(table.name)")
        }
        return database
    }

    /// The database of a state table; nil when a log opened read-only was written before the table existed (or, a
    /// programming error, the log was not opened with it).
    func existingDatabase(_ table: StateTable) -> LMDBDatabase? { stateTables[table.name] }

    /// Stamps a new log with the storage format, brings a log of format 1 to it (when opened for writing: its tables
    /// are this format's, and one more), and refuses a log written in any other. Returns the format it brought the
    /// log from, if it did.
    @discardableResult
    func checkStorageFormat(_ environment: LMDBEnvironment) throws -> UInt32? {
        let stored = try environment.read { transaction in
            try Self.formatKey.withUnsafeBytes { key in
                try transaction.value(in: meta, for: key).map {
                    UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self))
                }
            }
        }
        switch stored {
        case Self.storageFormat?:
            return nil
        case nil, 1?:
            // Never written, or format 1: readers read it as it is. The writer stamps it, dropping the retired tables in
            // the same transaction, so no older Chorus opens a log that lacks them.
            guard !environment.isReadOnly else { return nil }
            try environment.write { transaction in
                for name in Self.retiredDatabases { try transaction.dropDatabase(named: name) }
                try Self.formatKey.withUnsafeBytes { key in
                    try withUnsafeBytes(of: Self.storageFormat.littleEndian) { value in
                        try transaction.put(value, for: key, in: meta)
                    }
                }
            }
            return stored
        case let other?:
            throw EventLogError(
                .corruptRecord,
                "\(environment.path) holds log storage format \(other); this build reads \(Self.storageFormat)")
        }
    }

    private static let eventKeyPrefix: UInt8 = 0xFF
    static let eventKeySize = 9

    /// Calls `body` with the events key of `position`.
    static func withPositionKey<R>(_ position: LogPosition, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R
    {
        try withUnsafeTemporaryAllocation(byteCount: eventKeySize, alignment: 1) { key in
            key.storeBytes(of: eventKeyPrefix, toByteOffset: 0, as: UInt8.self)
            key.storeBytes(of: position.rawValue.bigEndian, toByteOffset: 1, as: UInt64.self)
            return try body(UnsafeRawBufferPointer(key))
        }
    }

    /// The position in an events key, or nil for a key of the main database that is not an event's.
    static func position(fromEventKey key: UnsafeRawBufferPointer) throws -> LogPosition? {
        guard key.first == eventKeyPrefix else { return nil }
        guard key.count == eventKeySize else {
            throw EventLogError.corruptRecord(at: nil, "is stored under a malformed \(key.count)-byte events key")
        }
        return LogPosition(UInt64(bigEndian: key.loadUnaligned(fromByteOffset: 1, as: UInt64.self)))
    }

    /// A position stored as a stream-index value.
    static func position(fromIndexValue value: UnsafeRawBufferPointer) -> LogPosition {
        LogPosition(UInt64(bigEndian: value.loadUnaligned(as: UInt64.self)))
    }

    static func withIndexValue<R>(_ position: LogPosition, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeBytes(of: position.rawValue.bigEndian, body)
    }

    /// The prefix every stream-index key of `stream` starts with.
    static func streamIndexPrefix(_ stream: StreamID) -> [UInt8] {
        var prefix: [UInt8] = []
        appendStreamIndexPrefix(name: stream.rawValue.utf8, to: &prefix)
        return prefix
    }

    /// ``streamIndexPrefix(_:)`` of the stream named by the UTF-8 bytes `name`, appended to `key`: the index write
    /// builds its keys in one buffer.
    static func appendStreamIndexPrefix(name: some Sequence<UInt8>, to key: inout [UInt8]) {
        key += name
        key.append(0)
    }

    static func streamIndexKey(prefix: [UInt8], version: UInt64) -> [UInt8] {
        var key = prefix
        withUnsafeBytes(of: version.bigEndian) { key.append(contentsOf: $0) }
        return key
    }

    /// The key every stream-index key of the stream whose prefix (``appendStreamIndexPrefix(name:to:)``) `key` holds
    /// sorts before or at: the prefix and the highest version. `key` gets the 8 bytes appended.
    static func appendStreamHeadBound(to key: inout [UInt8]) {
        key.append(contentsOf: repeatElement(0xFF, count: 8))
    }

    static func version(fromStreamIndexKey key: UnsafeRawBufferPointer) -> UInt64 {
        UInt64(bigEndian: key.loadUnaligned(fromByteOffset: key.count - 8, as: UInt64.self))
    }
}
