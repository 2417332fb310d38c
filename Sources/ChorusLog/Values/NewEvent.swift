/// An event to append: its type, the schema version its payload is written in, and the payload's bytes.
public struct NewEvent: Sendable, Hashable {
    /// Event types are stored in every record; keep them short.
    public static let maximumTypeLength = 100
    /// One record holds one payload; larger things (images) belong outside the log.
    public static let maximumPayloadSize = 1 << 20

    public var type: String
    public var schemaVersion: UInt16
    public var payload: [UInt8]

    public init(type: String, schemaVersion: UInt16 = 1, payload: [UInt8]) {
        self.type = type
        self.schemaVersion = schemaVersion
        self.payload = payload
    }

    func validate() throws(EventLogError) {
        let typeLength = type.utf8.count
        guard typeLength > 0, typeLength <= Self.maximumTypeLength else {
            throw .invalidAppend("an event type must be 1 to \(Self.maximumTypeLength) UTF-8 bytes, not \(typeLength)")
        }
        guard payload.count <= Self.maximumPayloadSize else {
            throw .invalidAppend(
                "an event payload must be at most \(Self.maximumPayloadSize) bytes, not \(payload.count)")
        }
    }
}
