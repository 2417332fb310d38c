/// The pieces of JSON text both writers put into bytes, the server's answers (ChorusHTTP's `JSONWriter`) and the
/// operator tools' lines (`chorus replay --json`, `chorus log export`): strings, escaped as `JSONEncoder` escapes them,
/// and whole numbers. Each value reserves the array's room once and is written through a pointer: appending a byte at
/// a time checked the array's room and uniqueness at every byte (a call into the runtime), most of a replay's writing.
/// Inlinable, like what they call: both writers are in other modules, where a call for each string, digit and nibble
/// made a replay's writing slower.
extension [UInt8] {
    /// Appends `utf8` as a JSON string, between quotes unless `quoted` is false (for a string written in parts):
    /// `"`, `\` and control characters escaped (`\b \f \n \r \t`, the others as `\u00XX`), everything else as it is.
    @inlinable package mutating func appendJSONString(_ utf8: UnsafeBufferPointer<UInt8>, quoted: Bool = true) {
        appendJSONText(atMost: utf8.count * 6 + 2) { out in
            var at = 0
            if quoted { out.put(UInt8(ascii: "\""), at: &at) }
            var runStart = 0
            while let index = JSONEscapes.firstEscaped(in: UnsafeRawBufferPointer(utf8), from: runStart) {
                JSONTextBytes.copy(utf8[runStart..<index], to: out, at: &at)
                runStart = index + 1
                JSONTextBytes.escape(utf8[index], into: out, at: &at)
            }
            JSONTextBytes.copy(utf8[runStart...], to: out, at: &at)
            if quoted { out.put(UInt8(ascii: "\""), at: &at) }
            return at
        }
    }

    /// Appends the UTF-8 bytes `utf8` as a JSON string (see `appendJSONString(_:quoted:)`): text read in place.
    @inlinable package mutating func appendJSONString(_ utf8: UnsafeRawBufferPointer, quoted: Bool = true) {
        utf8.withMemoryRebound(to: UInt8.self) { appendJSONString($0, quoted: quoted) }
    }

    /// Appends `text` as a JSON string (see `appendJSONString(_:quoted:)`).
    @inlinable package mutating func appendJSONString(_ text: String, quoted: Bool = true) {
        text.withBorrowedUTF8 { appendJSONString($0, quoted: quoted) }
    }

    /// Appends `value`'s decimal digits, with a minus sign when `negative`.
    @inlinable package mutating func appendJSONDigits(_ value: UInt64, negative: Bool = false) {
        appendJSONText(atMost: 21) { out in
            var at = 0
            if negative { out.put(UInt8(ascii: "-"), at: &at) }
            var (magnitude, divisor): (UInt64, UInt64) = (value, 1)
            while divisor <= magnitude / 10 { divisor *= 10 }
            while divisor > 0 {
                out.put(UInt8(ascii: "0") + UInt8(magnitude / divisor), at: &at)
                magnitude %= divisor
                divisor /= 10
            }
            return at
        }
    }

    /// Appends what `write` puts at the pointer it is lent, at most `maximum` bytes, and answers how many it wrote.
    @inlinable package mutating func appendJSONText(atMost maximum: Int, _ write: (UnsafeMutablePointer<UInt8>) -> Int)
    {
        append(addingCapacity: maximum) { span in
            span.withUnsafeMutableBufferPointer { buffer, count in count = write(buffer.baseAddress!) }
        }
    }
}

/// What `Array.appendJSONString(_:quoted:)` is made of, for a writer that puts its own text beside a string's (the
/// tools' keys).
@usableFromInline package enum JSONTextBytes {
    /// Copies `bytes` to `out + at`. Up to 32 bytes (keys, ids) as words, which may overlap, read and written within
    /// the bytes: a call to `memmove` for each cost more than the copy.
    @inlinable package static func copy(
        _ bytes: Slice<UnsafeBufferPointer<UInt8>>, to out: UnsafeMutablePointer<UInt8>, at: inout Int
    ) {
        let count = bytes.count
        guard count > 0 else { return }
        let from = UnsafeRawPointer(bytes.base.baseAddress! + bytes.startIndex)
        let to = UnsafeMutableRawPointer(out + at)
        /// The word of `Word`'s size at `offset`.
        func word<Word: FixedWidthInteger>(_: Word.Type, at offset: Int) {
            to.storeBytes(
                of: from.loadUnaligned(fromByteOffset: offset, as: Word.self), toByteOffset: offset, as: Word.self)
        }
        switch count {
        case 1...3:
            for offset in 0..<count { word(UInt8.self, at: offset) }
        case 4...7:
            word(UInt32.self, at: 0)
            word(UInt32.self, at: count - 4)
        case 8...16:
            word(UInt64.self, at: 0)
            word(UInt64.self, at: count - 8)
        case 17...32:
            word(UInt64.self, at: 0)
            word(UInt64.self, at: 8)
            word(UInt64.self, at: count - 16)
            word(UInt64.self, at: count - 8)
        default:
            to.copyMemory(from: from, byteCount: count)
        }
        at += count
    }

    /// `byte`, one that ``JSONEscapes/firstEscaped(in:from:)`` finds, escaped at `out + at`: at most six bytes.
    @inlinable package static func escape(_ byte: UInt8, into out: UnsafeMutablePointer<UInt8>, at: inout Int) {
        out.put(UInt8(ascii: "\\"), at: &at)
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): out.put(byte, at: &at)
        case UInt8(ascii: "\n"): out.put(UInt8(ascii: "n"), at: &at)
        case UInt8(ascii: "\r"): out.put(UInt8(ascii: "r"), at: &at)
        case UInt8(ascii: "\t"): out.put(UInt8(ascii: "t"), at: &at)
        case 0x08: out.put(UInt8(ascii: "b"), at: &at)
        case 0x0C: out.put(UInt8(ascii: "f"), at: &at)
        default:
            out.put(UInt8(ascii: "u"), at: &at)
            out.put(UInt8(ascii: "0"), at: &at)
            out.put(UInt8(ascii: "0"), at: &at)
            out.put(hexDigit(byte >> 4), at: &at)
            out.put(hexDigit(byte & 0xF), at: &at)
        }
    }

    /// A hexadecimal digit, lowercase unless `uppercase`.
    @inlinable package static func hexDigit(_ value: UInt8, uppercase: Bool = false) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : (uppercase ? UInt8(ascii: "A") : UInt8(ascii: "a")) + value - 10
    }
}

extension UnsafeMutablePointer<UInt8> {
    /// Writes `byte` at `self + at`, and moves `at` past it.
    @inlinable package func put(_ byte: UInt8, at: inout Int) {
        self[at] = byte
        at += 1
    }
}
