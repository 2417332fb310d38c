import ChorusLog
import ChorusProjections
import ChorusText

/// Writes JSON straight into bytes. Every answer goes through here: Foundation's `JSONEncoder` built a tree of
/// boxed values per answer, and was most of the server's time rendering feeds.
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

    /// `{ … }` whose first members are `members`, written before (one or more, commas between them), then those
    /// `fields` writes.
    mutating func object(startingWith members: [UInt8], _ fields: (inout JSONWriter) throws -> Void) rethrows {
        bytes.append(UInt8(ascii: "{"))
        bytes.append(contentsOf: members)
        atFirst = members.isEmpty
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

    mutating func string(_ text: String) { bytes.appendJSONString(text) }

    /// Text read in place.
    mutating func string(_ text: borrowing StoredText) {
        text.withUTF8 { $0.withUnsafeBytes { bytes.appendJSONString($0) } }
    }

    /// One string of `prefix`, `middle`, `text` and `suffix`, such as a URL made of a base, a path, an id read in
    /// place and a query.
    mutating func string(
        _ prefix: String, _ middle: StaticString, _ text: borrowing StoredText, _ suffix: StaticString = ""
    ) {
        bytes.append(UInt8(ascii: "\""))
        bytes.appendJSONString(prefix, quoted: false)
        middle.withUTF8Buffer { bytes.appendJSONString($0, quoted: false) }
        text.withUTF8 { $0.withUnsafeBytes { bytes.appendJSONString($0, quoted: false) } }
        suffix.withUTF8Buffer { bytes.appendJSONString($0, quoted: false) }
        bytes.append(UInt8(ascii: "\""))
    }

    mutating func null() { raw("null") }

    mutating func raw(_ text: String) { bytes.append(contentsOf: text.utf8) }

    /// A quoted ``ChorusLog/EventTime/rfc3339``.
    mutating func timestamp(_ time: EventTime) {
        bytes.append(UInt8(ascii: "\""))
        time.appendRFC3339(to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    /// A whole number's digits, without making a string of them first (each post has two counts).
    mutating func integer(_ value: UInt64) { bytes.appendJSONDigits(value) }

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
