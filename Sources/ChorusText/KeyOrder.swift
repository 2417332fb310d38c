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

    /// Whether one key comes before another, given their ``Prefix``es: `keys` lends the two keys' bytes (left,
    /// right) for ``compare(_:_:)`` only when the prefixes tie. What a bulk sort of keys held elsewhere compares by.
    @inlinable
    package static func precedes(
        _ left: Prefix, _ right: Prefix, keys: () -> (UnsafeRawBufferPointer, UnsafeRawBufferPointer)
    ) -> Bool {
        if left != right { return left < right }
        let (leftKey, rightKey) = keys()
        return compare(leftKey, rightKey) < 0
    }

    /// Whether `left` comes before `right`.
    package static func precedes(_ left: [UInt8], _ right: [UInt8]) -> Bool {
        left.withUnsafeBytes { left in right.withUnsafeBytes { compare(left, $0) < 0 } }
    }

    /// A key's first 24 bytes as three big-endian words, zero after its end. Two keys whose prefixes differ sort as
    /// the prefixes do (where they first differ, either both keys have bytes, or the shorter key has ended and so
    /// begins the other); only keys with equal prefixes need ``compare(_:_:)``. A bulk sort of ids, which differ
    /// within their first 24 bytes, then compares words held in its entries instead of calling `memcmp` on bytes
    /// elsewhere: the comparisons were most of the sorts of an import's batches.
    package struct Prefix: Comparable, Sendable {
        @usableFromInline let words: (UInt64, UInt64, UInt64)

        @inlinable
        package init(_ key: UnsafeRawBufferPointer) {
            var words: (UInt64, UInt64, UInt64) = (0, 0, 0)
            withUnsafeMutableBytes(of: &words) { words in
                let count = min(key.count, words.count)
                if count > 0 { words.baseAddress!.copyMemory(from: key.baseAddress!, byteCount: count) }
            }
            self.words = (UInt64(bigEndian: words.0), UInt64(bigEndian: words.1), UInt64(bigEndian: words.2))
        }

        // Inlinable: a sort in another module otherwise calls them through the protocol's witnesses.
        @inlinable
        package static func < (left: Prefix, right: Prefix) -> Bool { left.words < right.words }

        @inlinable
        package static func == (left: Prefix, right: Prefix) -> Bool { left.words == right.words }
    }
}
