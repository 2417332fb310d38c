import ChorusText
import Foundation

/// The stored form of one event. Little-endian, fixed header, then the variable parts:
///
/// ```
///  0  u32  CRC-32C of bytes 4..<end
///  4  u8   record format (1)
///  5  u16  schema version of the event type
///  7  u64  position
/// 15  u64  stream version
/// 23  i64  recorded at, ms since 1970
/// 31  16B  command id
/// 47  16B  correlation id
/// 63  u16  stream id length, u16 type length, u16 actor length, u32 payload length
/// 73  stream id, type, actor (UTF-8), payload
/// ```
package enum EventRecordCodec {
    static let recordFormat: UInt8 = 1
    static let headerSize = 73
    /// Where the position is in the header.
    static let positionOffset = 7

    /// The fields of a new event's record: the event and the envelope its append gives it.
    package struct Fields: EventRecordContents {
        package var position: LogPosition
        package var streamVersion: UInt64
        package var recordedAt: EventTime
        package var commandID: CommandID
        package var correlationID: CorrelationID
        package var stream: StreamID
        package var actor: String
        package var event: NewEvent

        package var type: String { event.type }
        package var schemaVersion: UInt16 { event.schemaVersion }
        package var payload: [UInt8] { event.payload }

        package init(
            position: LogPosition, streamVersion: UInt64, recordedAt: EventTime, commandID: CommandID,
            correlationID: CorrelationID, stream: StreamID, actor: String, event: NewEvent
        ) {
            (self.position, self.streamVersion, self.recordedAt) = (position, streamVersion, recordedAt)
            (self.commandID, self.correlationID, self.stream, self.actor, self.event) = (
                commandID, correlationID, stream, actor, event
            )
        }
    }

    package static func encodedSize(_ fields: borrowing some EventRecordContents) -> Int {
        headerSize + fields.stream.rawValue.utf8.count + fields.type.utf8.count + fields.actor.utf8.count
            + fields.payload.count
    }

    /// Writes the record into `buffer`, which is exactly ``encodedSize(_:)`` bytes. Always inlined: called, it was
    /// handed a copy of an element of the caller's array (its strings and payload retained and released).
    @inline(__always)
    package static func encode(_ fields: borrowing some EventRecordContents, into buffer: UnsafeMutableRawBufferPointer)
    {
        var writer = ByteWriter(buffer: buffer, offset: 4)
        writer.write(recordFormat)
        writer.write(fields.schemaVersion)
        writer.write(fields.position.rawValue)
        writer.write(fields.streamVersion)
        writer.write(fields.recordedAt.millisecondsSince1970)
        writer.write(uuid: fields.commandID.uuid)
        writer.write(uuid: fields.correlationID.uuid)
        writer.write(UInt16(fields.stream.rawValue.utf8.count))
        writer.write(UInt16(fields.type.utf8.count))
        writer.write(UInt16(fields.actor.utf8.count))
        writer.write(UInt32(fields.payload.count))
        // Read in place: `withUTF8` on copies of the strings retained and released each.
        fields.stream.rawValue.withBorrowedUTF8 { writer.write(bytes: UnsafeRawBufferPointer($0)) }
        fields.type.withBorrowedUTF8 { writer.write(bytes: UnsafeRawBufferPointer($0)) }
        fields.actor.withBorrowedUTF8 { writer.write(bytes: UnsafeRawBufferPointer($0)) }
        fields.payload.withUnsafeBytes { writer.write(bytes: $0) }
        precondition(writer.offset == buffer.count, "record size mismatch")
        let checksum = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: buffer[4...]))
        buffer.storeBytes(of: checksum.littleEndian, toByteOffset: 0, as: UInt32.self)
    }

    /// Whether the record belongs to the stream whose UTF-8 name is `stream`, read without decoding the rest.
    package static func belongs(_ bytes: UnsafeRawBufferPointer, to stream: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count >= headerSize else { return true }  // let decode report it
        let length = Int(UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: 63, as: UInt16.self)))
        guard length == stream.count, headerSize + length <= bytes.count else { return false }
        return UnsafeRawBufferPointer(rebasing: bytes[headerSize..<headerSize + length]).elementsEqual(stream)
    }

    /// Decodes a record after checking its checksum and layout. `key` is the position it was stored under.
    package static func decode(_ bytes: UnsafeRawBufferPointer, storedAt key: LogPosition?) throws(EventLogError)
        -> RecordedEvent
    {
        guard bytes.count >= headerSize else {
            throw .corruptRecord(at: key, "is \(bytes.count) bytes, shorter than its header")
        }
        let stored = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 0, as: UInt32.self))
        guard CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[4...])) == stored else {
            throw .corruptRecord(at: key, "fails its checksum")
        }
        var reader = ByteReader(buffer: bytes, offset: 4)
        let format: UInt8 = reader.read()
        guard format == recordFormat else { throw .corruptRecord(at: key, "has unknown record format \(format)") }
        let schemaVersion: UInt16 = reader.read()
        let position = LogPosition(reader.read() as UInt64)
        if let key, key != position {
            throw .corruptRecord(at: key, "says it is at position \(position)")
        }
        let streamVersion: UInt64 = reader.read()
        let recordedAt = EventTime(millisecondsSince1970: reader.read())
        let commandID = CommandID(reader.readUUID())
        let correlationID = CorrelationID(reader.readUUID())
        let streamLength = Int(reader.read() as UInt16)
        let typeLength = Int(reader.read() as UInt16)
        let actorLength = Int(reader.read() as UInt16)
        let payloadLength = Int(reader.read() as UInt32)
        guard headerSize + streamLength + typeLength + actorLength + payloadLength == bytes.count else {
            throw .corruptRecord(at: key, "has field lengths that do not add up to its size")
        }
        return RecordedEvent(
            position: position,
            stream: StreamID(unchecked: reader.readString(streamLength)),
            streamVersion: streamVersion,
            type: reader.readString(typeLength),
            schemaVersion: schemaVersion,
            recordedAt: recordedAt,
            commandID: commandID,
            correlationID: correlationID,
            actor: reader.readString(actorLength),
            payload: reader.readBytes(payloadLength)
        )
    }
}

/// Sequential little-endian writes into a buffer sized beforehand.
private struct ByteWriter {
    let buffer: UnsafeMutableRawBufferPointer
    var offset: Int

    mutating func write<T: FixedWidthInteger>(_ value: T) {
        buffer.storeBytes(of: value.littleEndian, toByteOffset: offset, as: T.self)
        offset += MemoryLayout<T>.size
    }

    mutating func write(uuid: UUID) {
        withUnsafeBytes(of: uuid.uuid) { write(bytes: $0) }
    }

    mutating func write(bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        UnsafeMutableRawBufferPointer(rebasing: buffer[offset..<offset + bytes.count]).copyMemory(from: bytes)
        offset += bytes.count
    }
}

/// Sequential little-endian reads; the caller has checked the lengths.
private struct ByteReader {
    let buffer: UnsafeRawBufferPointer
    var offset: Int

    mutating func read<T: FixedWidthInteger>() -> T {
        let value = T(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: T.self))
        offset += MemoryLayout<T>.size
        return value
    }

    mutating func readUUID() -> UUID {
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &bytes) {
            $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + 16]))
        }
        offset += 16
        return UUID(uuid: bytes)
    }

    mutating func readString(_ length: Int) -> String {
        defer { offset += length }
        return String(decoding: UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + length]), as: UTF8.self)
    }

    mutating func readBytes(_ length: Int) -> [UInt8] {
        defer { offset += length }
        return [UInt8](UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + length]))
    }
}

/// What a record holds, read in place by ``EventRecordCodec/encode(_:into:)``: a recorded event is encoded as it is
/// (an import's), a new one through ``EventRecordCodec/Fields``. Copied into `Fields` first, an imported event's
/// strings and payload were retained and released once more each.
package protocol EventRecordContents {
    var position: LogPosition { get }
    var streamVersion: UInt64 { get }
    var recordedAt: EventTime { get }
    var commandID: CommandID { get }
    var correlationID: CorrelationID { get }
    var stream: StreamID { get }
    var actor: String { get }
    var type: String { get }
    var schemaVersion: UInt16 { get }
    var payload: [UInt8] { get }
}
