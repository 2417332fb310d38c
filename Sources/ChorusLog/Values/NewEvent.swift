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

    func validate() throws(EventLogError) { try Self.validate(type: type, payloadSize: payload.count) }

    /// Throws unless an event of `type` with a payload of `payloadSize` bytes may be stored.
    package static func validate(type: String, payloadSize: Int) throws(EventLogError) {
        let typeLength = type.utf8.count
        guard typeLength > 0, typeLength <= maximumTypeLength else {
            throw .invalidAppend("an event type must be 1 to \(maximumTypeLength) UTF-8 bytes, not \(typeLength)")
        }
        guard payloadSize <= maximumPayloadSize else {
            throw .invalidAppend("an event payload must be at most \(maximumPayloadSize) bytes, not \(payloadSize)")
        }
    }
}
