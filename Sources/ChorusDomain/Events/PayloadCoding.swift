import ChorusLog

/// The compact binary form of event payloads (and of read-model records): fields in a fixed order per type and schema
/// version; strings as a u32 length and UTF-8; optionals behind a presence byte. Little-endian. Decoding checks every
/// length.
public struct PayloadWriter {
    public private(set) var bytes: [UInt8] = []

    public init(capacity: Int = 128) { bytes.reserveCapacity(capacity) }

    public mutating func write(_ value: UInt8) { bytes.append(value) }

    public mutating func write(_ value: Int64) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    public mutating func write(_ value: UInt64) { write(Int64(bitPattern: value)) }

    public mutating func write(_ text: String) {
        let utf8 = text.utf8
        withUnsafeBytes(of: UInt32(utf8.count).littleEndian) { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: utf8)
    }

    /// Bytes as a string's form: a u32 length, then the bytes.
    public mutating func write(bytes value: [UInt8]) {
        withUnsafeBytes(of: UInt32(value.count).littleEndian) { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: value)
    }

    public mutating func write(_ text: String?) {
        guard let text else { return write(UInt8(0)) }
        write(UInt8(1))
        write(text)
    }

    public mutating func write(_ id: some ChorusIdentifier) { write(id.rawValue) }

    public mutating func write<ID: ChorusIdentifier>(_ id: ID?) { write(id?.rawValue) }

    public mutating func write(_ position: LogPosition?) {
        guard let position else { return write(UInt8(0)) }
        write(UInt8(1))
        write(position.rawValue)
    }
}

/// Reads what ``PayloadWriter`` wrote where it lies: strings come back as their UTF-8 bytes in place, valid as long as
/// the buffer is. For answers written straight from stored records; ``PayloadReader`` is built on it. Throws
/// ``PayloadError`` on any mismatch.
public struct PayloadCursor {
    private let bytes: UnsafeRawBufferPointer
    public private(set) var offset: Int

    public init(_ bytes: UnsafeRawBufferPointer, offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    public mutating func readByte() throws -> UInt8 {
        guard offset < bytes.count else { throw PayloadError.truncated }
        defer { offset += 1 }
        return bytes[offset]
    }

    public mutating func readInt64() throws -> Int64 {
        guard offset + 8 <= bytes.count else { throw PayloadError.truncated }
        defer { offset += 8 }
        return Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: Int64.self))
    }

    /// A string's UTF-8 bytes, in place.
    public mutating func readUTF8() throws -> UnsafeRawBufferPointer {
        guard offset + 4 <= bytes.count else { throw PayloadError.truncated }
        let length = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
        guard length <= bytes.count - offset - 4 else { throw PayloadError.truncated }
        defer { offset += 4 + length }
        return UnsafeRawBufferPointer(rebasing: bytes[(offset + 4)..<(offset + 4 + length)])
    }

    public mutating func readOptionalUTF8() throws -> UnsafeRawBufferPointer? {
        switch try readByte() {
        case 0: return nil
        case 1: return try readUTF8()
        case let flag: throw PayloadError.badFlag(flag)
        }
    }

    /// The bytes not read yet.
    public var remaining: Int { bytes.count - offset }

    /// Fails unless every byte was read.
    public func finish() throws {
        guard offset == bytes.count else { throw PayloadError.trailingBytes(bytes.count - offset) }
    }
}

/// Reads what ``PayloadWriter`` wrote into values of their own; throws ``PayloadError`` on any mismatch.
public struct PayloadReader {
    private let bytes: [UInt8]
    private var offset = 0

    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// Reads one field through a ``PayloadCursor`` at the current offset. The offset moves after the bytes are lent,
    /// not inside: a change to `self` while they were lent had the bytes retained and released for every field.
    private mutating func read<T>(_ field: (inout PayloadCursor) throws -> T) throws -> T {
        let start = offset
        let (value, end) = try bytes.withUnsafeBytes { bytes in
            var cursor = PayloadCursor(bytes, offset: start)
            return (try field(&cursor), cursor.offset)
        }
        offset = end
        return value
    }

    public mutating func readByte() throws -> UInt8 { try read { try $0.readByte() } }

    public mutating func readInt64() throws -> Int64 { try read { try $0.readInt64() } }

    public mutating func readUInt64() throws -> UInt64 { UInt64(bitPattern: try readInt64()) }

    public mutating func readString() throws -> String {
        try read { String(decoding: try $0.readUTF8(), as: UTF8.self) }
    }

    /// What ``PayloadWriter/write(bytes:)`` wrote.
    public mutating func readBytes() throws -> [UInt8] { try read { Array(try $0.readUTF8()) } }

    /// Lends `body` what ``PayloadWriter/write(bytes:)`` wrote, in place.
    mutating func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        try read { try body(try $0.readUTF8()) }
    }

    public mutating func readOptionalString() throws -> String? {
        try read { try $0.readOptionalUTF8().map { String(decoding: $0, as: UTF8.self) } }
    }

    public mutating func read<ID: ChorusIdentifier>(_: ID.Type) throws -> ID { ID(unchecked: try readString()) }

    public mutating func readOptionalPosition() throws -> LogPosition? {
        switch try readByte() {
        case 0: nil
        case 1: LogPosition(try readUInt64())
        case let flag: throw PayloadError.badFlag(flag)
        }
    }

    public mutating func readOptional<ID: ChorusIdentifier>(_: ID.Type) throws -> ID? {
        try readOptionalString().map(ID.init(unchecked:))
    }

    /// The bytes not read yet.
    public var remaining: Int { bytes.count - offset }

    /// Fails unless every byte was read.
    public func finish() throws {
        guard offset == bytes.count else { throw PayloadError.trailingBytes(bytes.count - offset) }
    }
}

public enum PayloadError: Error, CustomStringConvertible {
    case truncated
    case badFlag(UInt8)
    case trailingBytes(Int)
    /// A sealed section (``SealedFields``) that its key does not open: damaged, or sealed under another key.
    case unreadableSealedFields
    /// A count past what its field may hold (five images in a post).
    case countOutOfRange(UInt8)

    public var description: String {
        switch self {
        case .truncated: "the payload ends early"
        case .badFlag(let flag): "the payload has presence flag \(flag)"
        case .trailingBytes(let count): "the payload has \(count) bytes past its last field"
        case .unreadableSealedFields: "the payload's personal fields do not open with their owner's data key"
        case .countOutOfRange(let count): "the payload counts \(count) of what a field holds fewer of"
        }
    }
}
