import ChorusLog
import Foundation

/// Reads a line exactly as `chorus log export` writes it — one flat JSON object, keys in sorted order, no spaces,
/// strings without escapes, integers — straight from its bytes into the event. Anything else, and any field out of
/// range, is left to JSONDecoder and ``ExportedEvent``, which say what is wrong: the scanner answers nil.
struct ExportLineScanner {
    private let bytes: UnsafeRawBufferPointer
    private var index = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// The event, or nil when the line is not in export's own form or a field is out of range. Made here, each field
    /// moved in: through an ``ExportedEvent``, its strings and payload were retained for the event and released with
    /// the exported one.
    mutating func event() -> RecordedEvent? {
        guard take("{"),
            let actor = field("actor", Self.string),
            let commandText = field("commandId", { $0.stringBytes() }), let commandId = Self.uuid(commandText),
            let correlationText = field("correlationId", { $0.stringBytes() }),
            // Nearly always the command's own id (a command that no other caused), which is not parsed twice.
            let correlationId = correlationText.elementsEqual(commandText) ? commandId : Self.uuid(correlationText),
            let payload = field("payload", Self.base64),
            let position = field("position", Self.unsigned), position > 0,
            let recordedAt = field("recordedAtMilliseconds", Self.signed),
            let schemaVersion = field("schemaVersion", Self.unsigned), (1...UInt64(UInt16.max)).contains(schemaVersion),
            let name = field("stream", Self.string), let stream = try? StreamID(name),
            let streamVersion = field("streamVersion", Self.unsigned), streamVersion > 0,
            let type = field("type", Self.string, last: true),
            index == bytes.count
        else { return nil }
        return RecordedEvent(
            position: LogPosition(position), stream: stream, streamVersion: streamVersion, type: type,
            schemaVersion: UInt16(schemaVersion), recordedAt: EventTime(millisecondsSince1970: recordedAt),
            commandID: CommandID(commandId), correlationID: CorrelationID(correlationId), actor: actor,
            payload: payload)
    }

    /// `"name":value` and the comma after it (the closing brace after the last).
    private mutating func field<Value>(_ name: StaticString, _ value: (inout Self) -> Value?, last: Bool = false)
        -> Value?
    {
        guard take("\""), takeBytes(name), take("\""), take(":"), let read = value(&self),
            take(last ? "}" : ",")
        else { return nil }
        return read
    }

    private mutating func take(_ character: Unicode.Scalar) -> Bool {
        guard index < bytes.count, bytes[index] == UInt8(ascii: character) else { return false }
        index += 1
        return true
    }

    private mutating func takeBytes(_ text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard index + count <= bytes.count,
            memcmp(bytes.baseAddress! + index, text.utf8Start, count) == 0
        else { return false }
        index += count
        return true
    }

    /// The bytes of a string without escapes, quotes taken.
    private mutating func stringBytes() -> UnsafeRawBufferPointer? {
        guard take("\"") else { return nil }
        let start = index
        // Eight bytes at a time while none is a quote, a backslash or a control character (most of a line is its
        // base64 payload), then a byte at a time.
        while index + 8 <= bytes.count,
            case let word = bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self),
            !Self.holdsZeroByte(word ^ Self.quotes), !Self.holdsZeroByte(word ^ Self.backslashes),
            (word &- Self.spaces) & ~word & Self.highBits == 0
        {
            index += 8
        }
        while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
            // Escapes and control characters: JSONDecoder's business.
            guard bytes[index] != UInt8(ascii: "\\"), bytes[index] >= 0x20 else { return nil }
            index += 1
        }
        guard index < bytes.count else { return nil }
        defer { index += 1 }
        return UnsafeRawBufferPointer(rebasing: bytes[start..<index])
    }

    /// The bytes of a string up to its closing quote, quotes taken, for a field that must be base64: escapes and
    /// control characters are not in its alphabet, and the decoder refuses them. Found with `memchr`, many bytes at a
    /// time: the payload is most of a line, too long for the loop above and its three tests a byte.
    private mutating func base64Bytes() -> UnsafeRawBufferPointer? {
        guard take("\""), index < bytes.count,
            let quote = memchr(bytes.baseAddress! + index, Int32(UInt8(ascii: "\"")), bytes.count - index)
        else { return nil }
        let end = bytes.baseAddress!.distance(to: UnsafeRawPointer(quote))
        defer { index = end + 1 }
        return UnsafeRawBufferPointer(rebasing: bytes[index..<end])
    }

    // Eight times one byte: 0x01, 0x80, a quote, a backslash, a space.
    private static let lowBits: UInt64 = 0x0101_0101_0101_0101
    private static let highBits: UInt64 = 0x8080_8080_8080_8080
    private static let quotes: UInt64 = 0x2222_2222_2222_2222
    private static let backslashes: UInt64 = 0x5C5C_5C5C_5C5C_5C5C
    private static let spaces: UInt64 = 0x2020_2020_2020_2020

    /// Whether a byte of `word` is zero (as a whole, exact: a borrow only spreads above a zero byte).
    private static func holdsZeroByte(_ word: UInt64) -> Bool { (word &- lowBits) & ~word & highBits != 0 }

    private static func string(_ scanner: inout Self) -> String? {
        guard let raw = scanner.stringBytes() else { return nil }
        // Ids, stream names and types are ASCII, valid UTF-8 as they are. `String(validating:)` looks up generic
        // metadata on every call: only strings with other bytes go through it.
        guard raw.allSatisfy({ $0 < 0x80 }) else { return String(validating: raw, as: UTF8.self) }
        return String(decoding: raw, as: UTF8.self)
    }

    /// Standard base64 with its padding, straight into the payload's bytes: through Foundation's `Data` it was four
    /// allocations for every event imported. Only the form `Data.base64EncodedString()` writes (whole groups, padded,
    /// no stray bits); anything else is JSONDecoder's business.
    private static func base64(_ scanner: inout Self) -> [UInt8]? {
        guard let text = scanner.base64Bytes(), text.count % 4 == 0 else { return nil }
        guard !text.isEmpty else { return [] }
        let padding = text[text.count - 1] != UInt8(ascii: "=") ? 0 : text[text.count - 2] != UInt8(ascii: "=") ? 1 : 2
        let count = text.count / 4 * 3 - padding
        var valid = true
        let bytes = [UInt8](unsafeUninitializedCapacity: count + padding) { out, initialized in
            Base64Alphabet.values.withUnsafeBufferPointer { values in
                var written = 0
                var read = 0
                while read < text.count {
                    let a = values[Int(text[read])]
                    let b = values[Int(text[read + 1])]
                    var c = values[Int(text[read + 2])]
                    var d = values[Int(text[read + 3])]
                    read += 4
                    if read == text.count {
                        // The padding, which stands for zero bits that must be zero.
                        if padding >= 1 { d = 0 }
                        if padding == 2 { c = 0 }
                    }
                    guard a | b | c | d < 64 else {
                        valid = false
                        break
                    }
                    let group = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                    out[written] = UInt8(truncatingIfNeeded: group >> 16)
                    out[written + 1] = UInt8(truncatingIfNeeded: group >> 8)
                    out[written + 2] = UInt8(truncatingIfNeeded: group)
                    written += 3
                }
                // Bits past the last byte must be zero, or two texts would stand for the same bytes.
                if valid, padding > 0, out[count] != 0 || (padding == 2 && out[count + 1] != 0) { valid = false }
            }
            initialized = valid ? count : 0
        }
        return valid ? bytes : nil
    }

    /// 8-4-4-4-12 hexadecimal digits, either case.
    private static func uuid(_ raw: UnsafeRawBufferPointer) -> UUID? {
        guard raw.count == 36 else { return nil }
        var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let parsed = withUnsafeMutableBytes(of: &value) { out in
            HexDigits.values.withUnsafeBufferPointer { values in
                var byte = 0
                var offset = 0
                // A byte that is not a digit has its high bit set in the table (and so has a misplaced dash, here):
                // one test at the end.
                var invalid: UInt8 = 0
                while offset < 36 {
                    if offset == 8 || offset == 13 || offset == 18 || offset == 23 {
                        invalid |= raw[offset] == UInt8(ascii: "-") ? 0 : 0x80
                        offset += 1
                        continue
                    }
                    let (high, low) = (values[Int(raw[offset])], values[Int(raw[offset + 1])])
                    invalid |= high | low
                    out[byte] = high << 4 | low
                    byte += 1
                    offset += 2
                }
                return invalid & 0x80 == 0
            }
        }
        return parsed ? UUID(uuid: value) : nil
    }

    /// Decimal digits, no sign, no leading zero (but "0"), within UInt64.
    private static func unsigned(_ scanner: inout Self) -> UInt64? {
        let start = scanner.index
        var value: UInt64 = 0
        while scanner.index < scanner.bytes.count,
            case let digit = scanner.bytes[scanner.index], digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9")
        {
            let (times, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, carry) = times.addingReportingOverflow(UInt64(digit - UInt8(ascii: "0")))
            guard !overflow, !carry else { return nil }
            value = sum
            scanner.index += 1
        }
        let count = scanner.index - start
        guard count > 0, count == 1 || scanner.bytes[start] != UInt8(ascii: "0") else { return nil }
        return value
    }

    private static func signed(_ scanner: inout Self) -> Int64? {
        let negative = scanner.take("-")
        guard let magnitude = unsigned(&scanner) else { return nil }
        if negative { return magnitude <= UInt64(Int64.max) + 1 ? Int64(truncatingIfNeeded: 0 &- magnitude) : nil }
        return magnitude <= UInt64(Int64.max) ? Int64(magnitude) : nil
    }
}

/// The standard base64 alphabet (RFC 4648 §4), as each character's value; 0xFF for any other byte.
private enum Base64Alphabet {
    static let values: [UInt8] = {
        var values = [UInt8](repeating: 0xFF, count: 256)
        for (value, character) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() {
            values[Int(character)] = UInt8(value)
        }
        return values
    }()
}

/// Each hexadecimal digit's value (either case); 0xFF for any other byte.
private enum HexDigits {
    static let values: [UInt8] = {
        var values = [UInt8](repeating: 0xFF, count: 256)
        for (value, character) in "0123456789abcdef".utf8.enumerated() { values[Int(character)] = UInt8(value) }
        for (value, character) in "ABCDEF".utf8.enumerated() { values[Int(character)] = UInt8(10 + value) }
        return values
    }()
}
