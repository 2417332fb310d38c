import ChorusHTTP
import ChorusLog
import Foundation

/// A JSON object written straight into bytes, in the order its parts are given: the caller sorts the keys.
struct JSONBytes {
    private(set) var bytes: [UInt8]
    /// Whether the next key is its object's first (no comma before it).
    private var first = true

    init(bytes: [UInt8] = []) { self.bytes = bytes }

    mutating func open() {
        bytes.append(UInt8(ascii: "{"))
        first = true
    }

    mutating func close() {
        bytes.append(UInt8(ascii: "}"))
        first = false
    }

    /// A key, after a comma unless it is its object's first. Written as it is: every key here is a literal or a Swift
    /// identifier (a field's name), which JSON never escapes (checked in debug builds), and keys are half the strings
    /// of `chorus replay --json`.
    mutating func key(_ name: String) {
        let comma = !first
        first = false
        Self.withUTF8(of: name) { utf8 in
            assert(JSONEscapes.firstEscaped(in: UnsafeRawBufferPointer(utf8), from: 0) == nil, "\(name) needs escaping")
            append(atMost: utf8.count + 4) { out in
                var at = 0
                if comma { out.put(UInt8(ascii: ","), at: &at) }
                out.put(UInt8(ascii: "\""), at: &at)
                Self.copy(utf8[...], to: out, at: &at)
                out.put(UInt8(ascii: "\""), at: &at)
                out.put(UInt8(ascii: ":"), at: &at)
                return at
            }
        }
    }

    /// Empties the bytes, keeping their storage for what comes next.
    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        first = true
    }

    mutating func integer(_ value: Int64) {
        append(atMost: 20) { out in
            var at = 0
            if value < 0 { out.put(UInt8(ascii: "-"), at: &at) }
            Self.digits(value.magnitude, into: out, at: &at)
            return at
        }
    }

    mutating func unsigned(_ value: UInt64) {
        append(atMost: 20) { out in
            var at = 0
            Self.digits(value, into: out, at: &at)
            return at
        }
    }

    private static func digits(_ value: UInt64, into out: UnsafeMutablePointer<UInt8>, at: inout Int) {
        var magnitude = value
        var divisor: UInt64 = 1
        while divisor <= magnitude / 10 { divisor *= 10 }
        while divisor > 0 {
            out.put(UInt8(ascii: "0") + UInt8(magnitude / divisor), at: &at)
            magnitude %= divisor
            divisor /= 10
        }
    }

    /// Text written as it is: `true`, `false`, `null`, the newline between lines.
    mutating func literal(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// A quoted ``ChorusLog/EventTime/rfc3339``, written straight into the bytes.
    mutating func timestamp(_ time: EventTime) {
        bytes.append(UInt8(ascii: "\""))
        time.appendRFC3339(to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    /// Quoted, 8-4-4-4-12, lowercase unless `uppercase` (as `UUID.uuidString` and JSONEncoder write it).
    mutating func uuid(_ value: uuid_t, uppercase: Bool = false) {
        var text: (UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &text) { out in
            withUnsafeBytes(of: value) { raw in
                var at = 1
                out[0] = UInt8(ascii: "\"")
                for index in 0..<16 {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        out[at] = UInt8(ascii: "-")
                        at += 1
                    }
                    out[at] = Self.hexDigit(raw[index] >> 4, uppercase: uppercase)
                    out[at + 1] = Self.hexDigit(raw[index] & 0xF, uppercase: uppercase)
                    at += 2
                }
                out[at] = UInt8(ascii: "\"")
                bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: out[0...at]))
            }
        }
    }

    private static func hexDigit(_ value: UInt8, uppercase: Bool = false) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : (uppercase ? UInt8(ascii: "A") : UInt8(ascii: "a")) + value - 10
    }

    private static let base64Digits = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// `data` in quoted base64, padded, as `Data.base64EncodedString()` writes it.
    mutating func base64(_ data: [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        Self.base64Digits.withUnsafeBufferPointer { digits in
            var index = 0
            while index + 3 <= data.count {
                let group = UInt32(data[index]) << 16 | UInt32(data[index + 1]) << 8 | UInt32(data[index + 2])
                bytes.append(digits[Int(group >> 18)])
                bytes.append(digits[Int(group >> 12 & 0x3F)])
                bytes.append(digits[Int(group >> 6 & 0x3F)])
                bytes.append(digits[Int(group & 0x3F)])
                index += 3
            }
            let left = data.count - index
            guard left > 0 else { return }
            let group = UInt32(data[index]) << 16 | (left == 2 ? UInt32(data[index + 1]) << 8 : 0)
            bytes.append(digits[Int(group >> 18 & 0x3F)])
            bytes.append(digits[Int(group >> 12 & 0x3F)])
            bytes.append(left == 2 ? digits[Int(group >> 6 & 0x3F)] : UInt8(ascii: "="))
            bytes.append(UInt8(ascii: "="))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// A quoted string: `"`, `\`, and control characters escaped, everything else as its UTF-8; as JSONEncoder escapes
    /// them.
    mutating func string(_ text: String) {
        Self.withUTF8(of: text) { utf8 in
            append(atMost: utf8.count * 6 + 2) { out in
                var at = 0
                Self.quoted(utf8, into: out, at: &at)
                return at
            }
        }
    }

    /// Lends `body` the text's UTF-8 in place, through its span, which takes no reference (the view of its storage read
    /// before retained and released it); where the span is not available, through that view, or a copy.
    private static func withUTF8(of text: String, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        if #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) {
            text.utf8Span.span.withUnsafeBufferPointer { body($0) }
        } else if text.utf8.withContiguousStorageIfAvailable({ body($0) }) == nil {
            Array(text.utf8).withUnsafeBufferPointer { body($0) }
        }
    }

    /// Appends what `write` puts at the pointer it is lent, at most `maximum` bytes, and answers how many it wrote: the
    /// array's room and uniqueness checked once for a value, not at every byte (where each check was a call into the
    /// runtime, and appending was two thirds of `chorus replay --json`'s writing).
    private mutating func append(atMost maximum: Int, _ write: (UnsafeMutablePointer<UInt8>) -> Int) {
        bytes.append(addingCapacity: maximum) { span in
            span.withUnsafeMutableBufferPointer { buffer, count in count = write(buffer.baseAddress!) }
        }
    }

    /// `utf8` quoted and escaped at `out + at`: at most six bytes for each of its bytes, and two quotes.
    private static func quoted(_ utf8: UnsafeBufferPointer<UInt8>, into out: UnsafeMutablePointer<UInt8>, at: inout Int)
    {
        out.put(UInt8(ascii: "\""), at: &at)
        var runStart = 0
        while let index = JSONEscapes.firstEscaped(in: UnsafeRawBufferPointer(utf8), from: runStart) {
            copy(utf8[runStart..<index], to: out, at: &at)
            runStart = index + 1
            escape(utf8[index], into: out, at: &at)
        }
        copy(utf8[runStart...], to: out, at: &at)
        out.put(UInt8(ascii: "\""), at: &at)
    }

    /// Copies `bytes` to `out + at`. Up to 32 bytes (keys, ids) as words, which may overlap, read and written within
    /// the bytes: a call to `memmove` for each cost more than the copy.
    private static func copy(
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

    private static func escape(_ byte: UInt8, into out: UnsafeMutablePointer<UInt8>, at: inout Int) {
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
}

extension UnsafeMutablePointer<UInt8> {
    /// Writes `byte` at `self + at`, and moves `at` past it.
    fileprivate func put(_ byte: UInt8, at: inout Int) {
        self[at] = byte
        at += 1
    }
}
