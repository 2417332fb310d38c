import Glibc

/// LMDB's order of keys: bytes compared unsigned, a key before every longer key it begins. With `memcmp`, several
/// times faster than the generic `lexicographicallyPrecedes` when sorting keys in bulk.
package enum KeyOrder {
    /// Negative, zero or positive as `left` comes before, equals or comes after `right`.
    package static func compare(_ left: UnsafeRawBufferPointer, _ right: UnsafeRawBufferPointer) -> Int32 {
        let common =
            left.isEmpty || right.isEmpty
            ? 0 : memcmp(left.baseAddress!, right.baseAddress!, min(left.count, right.count))
        return common != 0 ? common : Int32(left.count - right.count)
    }

    /// Whether `left` comes before `right`.
    package static func precedes(_ left: [UInt8], _ right: [UInt8]) -> Bool {
        left.withUnsafeBytes { left in right.withUnsafeBytes { compare(left, $0) < 0 } }
    }
}
