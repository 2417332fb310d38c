import ChorusLog
import ChorusStorage

/// Counters kept apart from the records they count, so that a like or a follow changes a few bytes instead of
/// decoding and re-encoding a whole profile or post: a fixed number of u64 little-endian values. A row exists only
/// while one of its counters is not zero (a missing row reads as zeros), so that counting afresh gives the same rows
/// as counting event by event.
struct Counters: Hashable {
    var values: [UInt64]

    init(count: Int) { values = [UInt64](repeating: 0, count: count) }

    init(decoding bytes: UnsafeRawBufferPointer, count: Int) {
        values = (0..<count).map { index in
            index * 8 + 8 <= bytes.count
                ? UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self)) : 0
        }
    }

    func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(values.count * 8)
        for value in values { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
        return bytes
    }

    var isZero: Bool { values.allSatisfy { $0 == 0 } }

    subscript(index: Int) -> UInt64 {
        get { values[index] }
        set { values[index] = newValue }
    }
}

extension StoreTransaction {
    /// Changes the counters stored under `key` (missing ones start at zero).
    func updateCounters(_ key: [UInt8], count: Int, in table: StoreTable, _ change: (inout Counters) -> Void) throws {
        var counters =
            try withValue(for: key, in: table) { $0.map { Counters(decoding: $0, count: count) } }
            ?? Counters(count: count)
        change(&counters)
        if counters.isZero {
            try delete(key, in: table)
        } else {
            try put(counters.encoded(), for: key, in: table)
        }
    }

    /// Adds `change` to counter number `counter` of the `count` counters under `key`.
    func addToCounter(_ counter: Int, of key: [UInt8], by change: Int64, count: Int, in table: StoreTable) throws {
        try updateCounters(key, count: count, in: table) {
            $0[counter] = UInt64(bitPattern: Int64(bitPattern: $0[counter]) + change)
        }
    }

    /// Fills the empty counters `table` afresh: for each key of `owners`, counter number i is the number of entries
    /// of `counted[i]` under that key (its keys start with the owner's and a NUL); rows of zeros are left out.
    func deriveCounters(in table: StoreTable, for owners: StoreTable, counting counted: [StoreTable]) throws {
        // Owners in key order, so that each row is appended.
        try scan(owners) { owner, _ in
            let prefix = Array(owner) + [0]
            var counters = Counters(count: counted.count)
            for (index, entries) in counted.enumerated() { counters[index] = try count(prefix: prefix, in: entries) }
            if !counters.isZero { try put(counters.encoded(), for: Array(owner), in: table, append: true) }
            return true
        }
    }

    /// The number of entries of `table` whose keys start with `prefix`.
    func count(prefix: [UInt8], in table: StoreTable) throws -> UInt64 {
        var count: UInt64 = 0
        try scan(table, prefix: prefix) { key, _ in
            count += 1
            return true
        }
        return count
    }

    func counters(_ key: [UInt8], count: Int, in table: StoreTable) throws -> Counters {
        try withValue(for: key, in: table) { $0.map { Counters(decoding: $0, count: count) } } ?? Counters(count: count)
    }

    /// The counters under `key`, read in place without copying: a feed page reads a row for every post.
    func countersInPlace(_ key: UnsafeRawBufferPointer, in table: StoreTable) throws -> StoredCounters {
        StoredCounters(row: try valueInPlace(for: key, in: table))
    }
}

/// A row of ``Counters`` where the snapshot holds it; valid as long as the transaction it was read in.
struct StoredCounters {
    let row: UnsafeRawBufferPointer?

    subscript(index: Int) -> UInt64 {
        guard let row, index * 8 + 8 <= row.count else { return 0 }
        return UInt64(littleEndian: row.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self))
    }
}
