import ChorusLog

/// Counters kept apart from the records they count, so that a like or a follow changes a few bytes instead of
/// decoding and re-encoding a whole profile or post: a fixed number of u64 little-endian values.
struct Counters: Hashable {
    var values: [UInt64]

    init(count: Int) { values = [UInt64](repeating: 0, count: count) }

    init(decoding bytes: UnsafeRawBufferPointer, count: Int) {
        values = (0..<count).map { index in
            index * 8 + 8 <= bytes.count ? UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self)) : 0
        }
    }

    func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(values.count * 8)
        for value in values { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
        return bytes
    }

    subscript(index: Int) -> UInt64 {
        get { values[index] }
        set { values[index] = newValue }
    }
}

extension StoreTransaction {
    /// Changes the counters stored under `key` (missing ones start at zero).
    func updateCounters(_ key: [UInt8], count: Int, in table: StoreTable, _ change: (inout Counters) -> Void) throws {
        var counters = try withValue(for: key, in: table) { $0.map { Counters(decoding: $0, count: count) } } ?? Counters(count: count)
        change(&counters)
        try put(counters.encoded(), for: key, in: table)
    }

    func counters(_ key: [UInt8], count: Int, in table: StoreTable) throws -> Counters {
        try withValue(for: key, in: table) { $0.map { Counters(decoding: $0, count: count) } } ?? Counters(count: count)
    }
}
