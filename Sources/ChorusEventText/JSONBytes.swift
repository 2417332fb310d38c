import ChorusLog
import ChorusText
import Foundation

/// A JSON object written straight into bytes, in the order its parts are given: the caller sorts the keys.
package struct JSONBytes {
    package private(set) var bytes: [UInt8]
    /// Whether the next key is its object's first (no comma before it).
    private var first = true

    package init(bytes: [UInt8] = []) { self.bytes = bytes }

    package mutating func open() {
        bytes.append(UInt8(ascii: "{"))
        first = true
    }

    package mutating func close() {
        bytes.append(UInt8(ascii: "}"))
        first = false
    }

    /// A list: its values follow, ``comma()`` between them.
    package mutating func openList() { bytes.append(UInt8(ascii: "[")) }

    package mutating func closeList() {
        bytes.append(UInt8(ascii: "]"))
        first = false
    }

    /// Between two values of a list.
    package mutating func comma() { bytes.append(UInt8(ascii: ",")) }

    /// A key, after a comma unless it is its object's first. Written as it is: every key here is a literal or a Swift
    /// identifier (a field's name), which JSON never escapes (checked in debug builds), and keys are half the strings
    /// of `chorus replay --json`. A literal's bytes are read straight from the binary.
    package mutating func key(_ name: StaticString) {
        appendKey(UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
    }

    /// A key that is not a literal: a field's name read by reflection.
    package mutating func key(named name: String) { name.withBorrowedUTF8 { appendKey($0) } }

    private mutating func appendKey(_ utf8: UnsafeBufferPointer<UInt8>) {
        assert(JSONEscapes.firstEscaped(in: UnsafeRawBufferPointer(utf8), from: 0) == nil, "a key that needs escaping")
        let comma = !first
        first = false
        bytes.appendJSONText(atMost: utf8.count + 4) { out in
            var at = 0
            if comma { out.put(UInt8(ascii: ","), at: &at) }
            out.put(UInt8(ascii: "\""), at: &at)
            JSONTextBytes.copy(utf8[...], to: out, at: &at)
            out.put(UInt8(ascii: "\""), at: &at)
            out.put(UInt8(ascii: ":"), at: &at)
            return at
        }
    }

    /// Empties the bytes, keeping their storage for what comes next.
    package mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        first = true
    }

    package mutating func integer(_ value: Int64) { bytes.appendJSONDigits(value.magnitude, negative: value < 0) }

    package mutating func unsigned(_ value: UInt64) { bytes.appendJSONDigits(value) }

    /// Text written as it is: `true`, `false`, `null`, the newline between lines.
    package mutating func literal(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// A quoted ``ChorusLog/EventTime/rfc3339``, written straight into the bytes.
    package mutating func timestamp(_ time: EventTime) {
        bytes.append(UInt8(ascii: "\""))
        time.appendRFC3339(to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    /// Quoted, 8-4-4-4-12, lowercase unless `uppercase` (as `UUID.uuidString` and JSONEncoder write it).
    package mutating func uuid(_ value: uuid_t, uppercase: Bool = false) {
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
                    out[at] = JSONTextBytes.hexDigit(raw[index] >> 4, uppercase: uppercase)
                    out[at + 1] = JSONTextBytes.hexDigit(raw[index] & 0xF, uppercase: uppercase)
                    at += 2
                }
                out[at] = UInt8(ascii: "\"")
                bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: out[0...at]))
            }
        }
    }

    private static let base64Digits = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// `data` in quoted base64, padded, as `Data.base64EncodedString()` writes it.
    package mutating func base64(_ data: [UInt8]) {
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

    /// A quoted string, escaped as `JSONEncoder` escapes it, and DEL and the C1 controls too (`\u007f`, `\u009b`):
    /// JSON may hold them as they are, but a terminal the lines are printed on takes them as commands (see
    /// ``TerminalText``).
    package mutating func string(_ text: String) {
        text.withBorrowedUTF8 { utf8 in
            guard let first = Self.firstTerminalControl(in: utf8, from: 0) else { return bytes.appendJSONString(utf8) }
            bytes.append(UInt8(ascii: "\""))
            var (start, control) = (0, first)
            while true {
                bytes.appendJSONString(UnsafeBufferPointer(rebasing: utf8[start..<control]), quoted: false)
                // DEL is one byte; a C1 control two, its code point in the second.
                let codePoint = utf8[control] == 0x7F ? 0x7F : utf8[control + 1]
                bytes += Array("\\u00".utf8)
                bytes += [JSONTextBytes.hexDigit(codePoint >> 4), JSONTextBytes.hexDigit(codePoint & 0xF)]
                start = control + (utf8[control] == 0x7F ? 1 : 2)
                guard let next = Self.firstTerminalControl(in: utf8, from: start) else { break }
                control = next
            }
            bytes.appendJSONString(UnsafeBufferPointer(rebasing: utf8[start...]), quoted: false)
            bytes.append(UInt8(ascii: "\""))
        }
    }

    /// Where the first DEL (0x7F) or C1 control (U+0080–U+009F: 0xC2, then 0x80–0x9F) at or after `start` is in
    /// `utf8`. Eight bytes at a time, as ``JSONEscapes`` looks: almost no text has either byte, and a replay writes
    /// little else.
    private static func firstTerminalControl(in utf8: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        let ones: UInt64 = 0x0101_0101_0101_0101
        /// The high bit of each byte of `word` that is `byte` (and maybe of bytes after one that is).
        func matching(_ word: UInt64, _ byte: UInt8) -> UInt64 {
            let difference = word ^ (ones &* UInt64(byte))
            return (difference &- ones) & ~difference & (ones &* 0x80)
        }
        var index = start
        let raw = UnsafeRawBufferPointer(utf8)
        while index + 8 <= raw.count {
            let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            guard matching(word, 0x7F) | matching(word, 0xC2) == 0 else { break }
            index += 8
        }
        while index < utf8.count {
            let byte = utf8[index]
            if byte == 0x7F { return index }
            if byte == 0xC2, index + 1 < utf8.count, (0x80...0x9F).contains(utf8[index + 1]) { return index }
            index += 1
        }
        return nil
    }
}
