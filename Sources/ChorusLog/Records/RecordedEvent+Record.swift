/// An event in the log's stored form, for a log kept elsewhere that must hold exactly the bytes every replica holds
/// (the format is ``EventRecordCodec``'s, checksum included).
extension RecordedEvent {
    /// The record the log stores for this event.
    public var record: [UInt8] {
        let size = EventRecordCodec.encodedSize(self)
        return [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            EventRecordCodec.encode(
                self, into: UnsafeMutableRawBufferPointer(UnsafeMutableBufferPointer(rebasing: buffer[..<size])))
            count = size
        }
    }

    /// The event a stored record holds, after checking its checksum and layout.
    /// - Throws: ``EventLogError`` (``EventLogError/Code/corruptRecord``).
    public init(record: [UInt8], storedAt position: LogPosition? = nil) throws {
        self = try record.withUnsafeBytes { try EventRecordCodec.decode($0, storedAt: position) }
    }
}

extension RecordedEvent: EventRecordContents {}
