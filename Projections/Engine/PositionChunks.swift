import ChorusLog
import ChorusStorage

/// Long sorted lists of log positions, one per owner, such as Following feeds: stored in chunks of up to
/// ``capacity`` positions (8 bytes each, big-endian, back to back), each chunk keyed by its owner and its first
/// position. Writing a whole list is one put per chunk, and a new newest position rewrites only the last chunk
/// (1 KB at most), where a set stored element by element pays LMDB's search and page shuffling for each.
///
/// The chunks are always the list cut into runs of ``capacity`` from its oldest position, whatever the order of
/// the changes that made it, so that a list built at once equals, byte for byte, one changed a position at a time.
///
/// - key: owner, NUL, first position of the chunk → the chunk's positions
struct PositionChunks {
    static let capacity = 128

    let table: StoreTable

    /// Appends `position`, which must be newer than every position of `owner`'s list. A post appends to each of its
    /// author's followers' lists, so the last chunk is copied once, into a value with room for the new position, and
    /// the keys are built in one buffer: the arrays made and grown along the way were most of an append's own work.
    func append(_ position: LogPosition, for owner: [UInt8], in transaction: StoreTransaction) throws {
        // The owner, NUL, then the newest possible position: where the backward scan starts.
        var key = owner
        key.reserveCapacity(owner.count + 9)
        key.append(0)
        let prefixCount = key.count
        key.append(contentsOf: repeatElement(0xFF, count: 8))
        var last: (key: [UInt8], positions: [UInt8])?
        try transaction.scan(table, from: key, direction: .backward) { found, value in
            guard Self.isChunk(found, of: key[..<prefixCount]), value.count < Self.capacity * 8 else { return false }
            var positions: [UInt8] = []
            positions.reserveCapacity(value.count + 8)
            positions.append(contentsOf: value)
            last = (Array(found), positions)
            return false
        }
        let bytes = ProjectionKey.position(position)
        if var last {
            guard Self.position(in: last.positions, at: last.positions.count / 8 - 1) < position else {
                throw ProjectionError.inconsistent("a list of positions holds one past \(position)")
            }
            last.positions += bytes
            try transaction.put(last.positions, for: last.key, in: table)
        } else {
            key.replaceSubrange(prefixCount..., with: bytes)
            try transaction.put(bytes, for: key, in: table)
        }
    }

    /// Adds `positions` (any order) to `owner`'s list.
    func insert(_ positions: [LogPosition], for owner: [UInt8], in transaction: StoreTransaction) throws {
        guard let oldest = positions.min() else { return }
        try rewrite(owner, from: oldest, in: transaction) { list in
            list = Array(Set(list).union(positions.map(\.rawValue))).sorted()
        }
    }

    /// Removes `positions` from `owner`'s list.
    func remove(_ positions: [LogPosition], for owner: [UInt8], in transaction: StoreTransaction) throws {
        guard let oldest = positions.min() else { return }
        let removed = Set(positions.map(\.rawValue))
        try rewrite(owner, from: oldest, in: transaction) { list in list.removeAll(where: removed.contains) }
    }

    /// Writes `owner`'s whole list, which holds nothing yet, from `positions` in ascending order. `append` promises
    /// that `owner` sorts after every owner in the table.
    func write(_ positions: [UInt64], for owner: UnsafeRawBufferPointer, append: Bool, in transaction: StoreTransaction)
        throws
    {
        try write(positions[...], prefix: Array(owner) + [0], append: append, in: transaction)
    }

    /// Calls `body` with `owner`'s positions from the newest down, starting below `before` if given, until it returns
    /// false.
    func forEachNewestFirst(
        of owner: [UInt8], before: LogPosition?, in transaction: StoreTransaction, _ body: (LogPosition) throws -> Bool
    ) throws {
        // Nothing comes before position 1.
        guard before.map({ $0.rawValue > 1 }) ?? true else { return }
        let prefix = owner + [0]
        let start = before.map { prefix + ProjectionKey.position(LogPosition($0.rawValue - 1)) }
        try transaction.scan(
            table, within: prefix, from: start ?? prefix + [UInt8](repeating: 0xFF, count: 8), direction: .backward
        ) { key, value in
            guard Self.isChunk(key, of: prefix) else { return false }
            for index in stride(from: value.count / 8 - 1, through: 0, by: -1) {
                let position = ProjectionKey.position(in: value, at: index * 8)
                if let before, position >= before { continue }
                guard try body(position) else { return false }
            }
            return true
        }
    }

    /// Up to `count` of `owner`'s positions, newest first, below `before` if given.
    func newest(_ count: Int, of owner: [UInt8], before: LogPosition?, in transaction: StoreTransaction) throws
        -> [LogPosition]
    {
        var positions: [LogPosition] = []
        positions.reserveCapacity(count)
        try forEachNewestFirst(of: owner, before: before, in: transaction) { position in
            positions.append(position)
            return positions.count < count
        }
        return positions
    }

    /// Whether `owner`'s list holds `position`.
    func contains(_ position: LogPosition, for owner: [UInt8], in transaction: StoreTransaction) throws -> Bool {
        let prefix = owner + [0]
        var found = false
        // The chunk that would hold it is the last one that starts at or before it.
        try transaction.scan(
            table, within: prefix, from: prefix + ProjectionKey.position(position), direction: .backward
        ) { key, value in
            guard Self.isChunk(key, of: prefix) else { return false }
            for index in 0..<(value.count / 8) where ProjectionKey.position(in: value, at: index * 8) == position {
                found = true
            }
            return false
        }
        return found
    }

    /// The number of positions in every list.
    func count(in transaction: StoreTransaction) throws -> Int {
        var count = 0
        try transaction.scan(table) { _, value in
            count += value.count / 8
            return true
        }
        return count
    }

    /// Applies `change` to the part of `owner`'s list from the chunk that holds `oldest` (or would) to its end, and
    /// writes that part again in chunks. The chunks before it are full and stay as they are.
    private func rewrite(
        _ owner: [UInt8], from oldest: LogPosition, in transaction: StoreTransaction, _ change: (inout [UInt64]) -> Void
    ) throws {
        let prefix = owner + [0]
        var first = prefix
        try transaction.scan(table, from: prefix + ProjectionKey.position(oldest), direction: .backward) { key, _ in
            if Self.isChunk(key, of: prefix) { first = Array(key) }
            return false
        }
        var keys: [[UInt8]] = []
        var list: [UInt64] = []
        try transaction.scan(table, from: first) { key, value in
            guard Self.isChunk(key, of: prefix) else { return false }
            keys.append(Array(key))
            for index in 0..<(value.count / 8) {
                list.append(ProjectionKey.position(in: value, at: index * 8).rawValue)
            }
            return true
        }
        for key in keys { try transaction.delete(key, in: table) }
        change(&list)
        try write(list[...], prefix: prefix, append: false, in: transaction)
    }

    private func write(_ positions: ArraySlice<UInt64>, prefix: [UInt8], append: Bool, in transaction: StoreTransaction)
        throws
    {
        var start = positions.startIndex
        while start < positions.endIndex {
            let chunk = positions[start..<min(start + Self.capacity, positions.endIndex)]
            var bytes: [UInt8] = []
            bytes.reserveCapacity(chunk.count * 8)
            for position in chunk { withUnsafeBytes(of: position.bigEndian) { bytes.append(contentsOf: $0) } }
            try transaction.put(bytes, for: prefix + bytes[0..<8], in: table, append: append)
            start = chunk.endIndex
        }
    }

    /// Whether `key` is one of the chunks of the owner whose keys start with `prefix`.
    private static func isChunk(_ key: UnsafeRawBufferPointer, of prefix: some Collection<UInt8>) -> Bool {
        key.count == prefix.count + 8 && key.starts(with: prefix)
    }

    private static func position(in bytes: [UInt8], at index: Int) -> LogPosition {
        bytes.withUnsafeBytes { ProjectionKey.position(in: $0, at: index * 8) }
    }
}
