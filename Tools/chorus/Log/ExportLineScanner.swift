import Foundation

/// Reads a line exactly as `chorus log export` writes it — one flat JSON object, keys in sorted order, no spaces,
/// strings without escapes, integers — straight from its bytes. Anything else is left to JSONDecoder: the scanner
/// answers nil.
struct ExportLineScanner {
    private let bytes: UnsafeRawBufferPointer
    private var index = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// The event, or nil when the line is not in export's own form.
    mutating func event() -> ExportedEvent? {
        guard take("{"),
            let actor = field("actor", Self.string),
            let commandId = field("commandId", Self.uuid),
            let correlationId = field("correlationId", Self.uuid),
            let payload = field("payload", Self.base64),
            let position = field("position", Self.unsigned),
            let recordedAt = field("recordedAtMilliseconds", Self.signed),
            let schemaVersion = field("schemaVersion", Self.unsigned), schemaVersion <= UInt64(UInt16.max),
            let stream = field("stream", Self.string),
            let streamVersion = field("streamVersion", Self.unsigned),
            let type = field("type", Self.string, last: true),
            index == bytes.count
        else { return nil }
        return ExportedEvent(
            position: position, stream: stream, streamVersion: streamVersion, type: type,
            schemaVersion: UInt16(schemaVersion), recordedAtMilliseconds: recordedAt, commandId: commandId,
            correlationId: correlationId, actor: actor, payload: payload)
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
        while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
            // Escapes and control characters: JSONDecoder's business.
            guard bytes[index] != UInt8(ascii: "\\"), bytes[index] >= 0x20 else { return nil }
            index += 1
        }
        guard index < bytes.count else { return nil }
        defer { index += 1 }
        return UnsafeRawBufferPointer(rebasing: bytes[start..<index])
    }

    private static func string(_ scanner: inout Self) -> String? {
        guard let raw = scanner.stringBytes() else { return nil }
        return String(validating: raw, as: UTF8.self)
    }

    private static func base64(_ scanner: inout Self) -> Data? {
        guard let raw = scanner.stringBytes() else { return nil }
        return Data(base64Encoded: Data(raw))
    }

    /// 8-4-4-4-12 hexadecimal digits, either case.
    private static func uuid(_ scanner: inout Self) -> UUID? {
        guard let raw = scanner.stringBytes(), raw.count == 36 else { return nil }
        var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let parsed = withUnsafeMutableBytes(of: &value) { out -> Bool in
            var byte = 0
            var offset = 0
            while offset < 36 {
                if offset == 8 || offset == 13 || offset == 18 || offset == 23 {
                    guard raw[offset] == UInt8(ascii: "-") else { return false }
                    offset += 1
                    continue
                }
                guard let high = hex(raw[offset]), let low = hex(raw[offset + 1]) else { return false }
                out[byte] = high << 4 | low
                byte += 1
                offset += 2
            }
            return true
        }
        return parsed ? UUID(uuid: value) : nil
    }

    private static func hex(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
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
