/// Where text needs escaping in a JSON string (see `Array.appendJSONString(_:quoted:)`).
@usableFromInline package enum JSONEscapes {
    /// Where the first byte at or after `start` that JSON escapes (below 0x20, `"` or `\`) is, if anywhere. Eight bytes
    /// at a time: almost no text needs escaping, and `chorus replay --json` writes little else.
    @inlinable package static func firstEscaped(in utf8: UnsafeRawBufferPointer, from start: Int) -> Int? {
        var index = start
        while index + 8 <= utf8.count, !anyNeedsEscaping(utf8.loadUnaligned(fromByteOffset: index, as: UInt64.self)) {
            index += 8
        }
        while index < utf8.count {
            let byte = utf8[index]
            if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return index }
            index += 1
        }
        return nil
    }

    /// Whether any of the eight bytes is below 0x20, `"` or `\` (exact: a borrow only carries past a byte that
    /// matched). Each test leaves a byte's high bit set where the byte matched; bytes from 0x80 up never do.
    @usableFromInline static func anyNeedsEscaping(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        func matching(_ byte: UInt8) -> UInt64 {
            let difference = word ^ (ones &* UInt64(byte))
            return (difference &- ones) & ~difference
        }
        let control = (word &- ones &* 0x20) & ~word
        return (control | matching(UInt8(ascii: "\"")) | matching(UInt8(ascii: "\\"))) & (ones &* 0x80) != 0
    }
}
