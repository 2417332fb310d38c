import ChorusLog
import ChorusProjections

/// Writes JSON straight into bytes. Every answer goes through here: Foundation's `JSONEncoder` built a tree of
/// boxed values per answer and took 40 % of the server's time rendering feeds.
struct JSONWriter {
    private(set) var bytes: [UInt8] = []
    /// Whether the next value in the current object or array is its first (no comma before it).
    private var atFirst = true

    /// A page of 20 posts is about 7 KB: one allocation for most answers.
    init(capacity: Int = 16_384) { bytes.reserveCapacity(capacity) }

    /// The bytes of `value` as JSON.
    static func encode(_ value: some JSONWritable) -> [UInt8] {
        var writer = JSONWriter()
        value.write(to: &writer)
        return writer.bytes
    }

    /// `{ … }`, with `fields` writing the members through ``field(_:_:)``.
    mutating func object(_ fields: (inout JSONWriter) throws -> Void) rethrows {
        bytes.append(UInt8(ascii: "{"))
        atFirst = true
        try fields(&self)
        bytes.append(UInt8(ascii: "}"))
        atFirst = false
    }

    /// `[ … ]`, with `elements` writing each element through ``element(_:)``: for elements lent one at a time.
    mutating func array(writing elements: (inout JSONWriter) throws -> Void) rethrows {
        bytes.append(UInt8(ascii: "["))
        atFirst = true
        try elements(&self)
        bytes.append(UInt8(ascii: "]"))
        atFirst = false
    }

    /// One element of the array ``array(writing:)`` writes.
    mutating func element(_ write: (inout JSONWriter) throws -> Void) rethrows {
        separate()
        try write(&self)
        atFirst = false
    }

    /// `[ … ]`.
    mutating func array(_ elements: some Sequence<some JSONWritable>) {
        bytes.append(UInt8(ascii: "["))
        atFirst = true
        for element in elements {
            separate()
            element.write(to: &self)
            atFirst = false
        }
        bytes.append(UInt8(ascii: "]"))
        atFirst = false
    }

    /// One member of the object being written; names are ASCII and need no escaping.
    mutating func field(_ name: StaticString, _ value: some JSONWritable) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        value.write(to: &self)
        atFirst = false
    }

    /// One member of the object being written, its value written by `value`: for values lent in place.
    mutating func field(_ name: StaticString, _ value: (inout JSONWriter) throws -> Void) rethrows {
        separate()
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        try value(&self)
        atFirst = false
    }

    /// A member with a name known only at run time.
    mutating func field(named name: String, _ value: some JSONWritable) {
        separate()
        string(name)
        bytes.append(UInt8(ascii: ":"))
        value.write(to: &self)
        atFirst = false
    }

    mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        escaped(text)
        bytes.append(UInt8(ascii: "\""))
    }

    /// Text read in place.
    mutating func string(_ text: borrowing StoredText) {
        bytes.append(UInt8(ascii: "\""))
        text.withUTF8 { $0.withUnsafeBytes { escaped($0) } }
        bytes.append(UInt8(ascii: "\""))
    }

    /// One string of `prefix`, `middle` and `text`, such as a URL made of a base, a path and an id read in place.
    mutating func string(_ prefix: String, _ middle: StaticString, _ text: borrowing StoredText) {
        bytes.append(UInt8(ascii: "\""))
        escaped(prefix)
        middle.withUTF8Buffer { escaped(UnsafeRawBufferPointer($0)) }
        text.withUTF8 { $0.withUnsafeBytes { escaped($0) } }
        bytes.append(UInt8(ascii: "\""))
    }

    mutating func null() { raw("null") }

    /// Read in place where the string's storage allows (a native string's does), saving a retain and release.
    private mutating func escaped(_ text: String) {
        if text.utf8.withContiguousStorageIfAvailable({ escaped(UnsafeRawBufferPointer($0)) }) == nil {
            Array(text.utf8).withUnsafeBytes { escaped($0) }
        }
    }

    private mutating func escaped(_ utf8: UnsafeRawBufferPointer) {
        // Most text needs no escaping: copy it whole.
        guard JSONEscapes.firstEscaped(in: utf8, from: 0) != nil else {
            bytes.append(contentsOf: utf8)
            return
        }
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default: bytes.append(byte)
            }
        }
    }

    mutating func raw(_ text: String) { bytes.append(contentsOf: text.utf8) }

    /// A quoted ``ChorusLog/EventTime/rfc3339``.
    mutating func timestamp(_ time: EventTime) {
        bytes.append(UInt8(ascii: "\""))
        time.appendRFC3339(to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    /// A whole number's digits, without making a string of them first (each post has two counts).
    mutating func integer(_ value: UInt64) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in  // UInt64.max has 20
            var (rest, start) = (value, digits.count)
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            } while rest > 0
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }

    private mutating func separate() {
        if !atFirst { bytes.append(UInt8(ascii: ",")) }
    }
}

/// A value that writes itself as JSON. Its type may be captured by the routes' `@Sendable` closures.
protocol JSONWritable: SendableMetatype {
    func write(to json: inout JSONWriter)
}

extension String: JSONWritable {
    func write(to json: inout JSONWriter) { json.string(self) }
}

extension Bool: JSONWritable {
    func write(to json: inout JSONWriter) { json.raw(self ? "true" : "false") }
}

extension UInt64: JSONWritable {
    func write(to json: inout JSONWriter) { json.integer(self) }
}

extension Int: JSONWritable {
    func write(to json: inout JSONWriter) {
        if self < 0 { json.raw("-") }
        json.integer(UInt64(magnitude))
    }
}

extension Double: JSONWritable {
    func write(to json: inout JSONWriter) { json.raw(isFinite ? String(self) : "null") }
}

/// `nil` is written as `null`, as openapi.yaml shows absent values (`"profileImage": null`).
extension Optional: JSONWritable where Wrapped: JSONWritable {
    func write(to json: inout JSONWriter) {
        if let self { self.write(to: &json) } else { json.null() }
    }
}

extension Array: JSONWritable where Element: JSONWritable {
    func write(to json: inout JSONWriter) { json.array(self) }
}

/// Times are written as RFC 3339 timestamps (``ChorusLog/EventTime/appendRFC3339(to:)``), straight into the answer:
/// each post, comment, message and notification has one.
extension EventTime: JSONWritable {
    func write(to json: inout JSONWriter) { json.timestamp(self) }
}
