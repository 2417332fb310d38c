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

    mutating func key(_ name: String) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
        string(name)
        bytes.append(UInt8(ascii: ":"))
    }

    /// Empties the bytes, keeping their storage for what comes next.
    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        first = true
    }

    mutating func integer(_ value: Int64) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        unsigned(value.magnitude)
    }

    mutating func unsigned(_ value: UInt64) {
        var magnitude = value
        var divisor: UInt64 = 1
        while divisor <= magnitude / 10 { divisor *= 10 }
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(magnitude / divisor))
            magnitude %= divisor
            divisor /= 10
        }
    }

    /// `text` as it is, in quotes if `quoted`: for values known to need no escaping.
    mutating func raw(_ text: [UInt8], quoted: Bool) {
        if quoted { bytes.append(UInt8(ascii: "\"")) }
        bytes.append(contentsOf: text)
        if quoted { bytes.append(UInt8(ascii: "\"")) }
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
        bytes.append(UInt8(ascii: "\""))
        // Read in place where the string's storage allows (a native string's does), saving a copy's retain and release.
        if text.utf8.withContiguousStorageIfAvailable({ escaped($0) }) == nil {
            Array(text.utf8).withUnsafeBufferPointer { escaped($0) }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func escaped(_ utf8: UnsafeBufferPointer<UInt8>) {
        var runStart = 0
        while let index = JSONEscapes.firstEscaped(in: UnsafeRawBufferPointer(utf8), from: runStart) {
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
            runStart = index + 1
            escape(utf8[index])
        }
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
    }

    private mutating func escape(_ byte: UInt8) {
        bytes.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
        case UInt8(ascii: "\n"): bytes.append(UInt8(ascii: "n"))
        case UInt8(ascii: "\r"): bytes.append(UInt8(ascii: "r"))
        case UInt8(ascii: "\t"): bytes.append(UInt8(ascii: "t"))
        case 0x08: bytes.append(UInt8(ascii: "b"))
        case 0x0C: bytes.append(UInt8(ascii: "f"))
        default:
            bytes.append(contentsOf: Array("u00".utf8))
            bytes.append(Self.hexDigit(byte >> 4))
            bytes.append(Self.hexDigit(byte & 0xF))
        }
    }
}
