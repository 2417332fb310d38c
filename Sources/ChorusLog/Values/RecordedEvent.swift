/// An event as the log holds it: the envelope the log assigned and the payload the appender gave.
public struct RecordedEvent: Sendable, Hashable {
    /// Global position, from 1, gapless.
    public let position: LogPosition
    public let stream: StreamID
    /// Version within `stream`, from 1, gapless.
    public let streamVersion: UInt64
    public let type: String
    /// The version of `type`'s payload shape this event was written with.
    public let schemaVersion: UInt16
    public let recordedAt: EventTime
    /// The command that appended it; the same for every event of one append.
    public let commandID: CommandID
    public let correlationID: CorrelationID
    /// Who caused it (a user id, or a system name).
    public let actor: String
    public let payload: [UInt8]

    public init(
        position: LogPosition, stream: StreamID, streamVersion: UInt64, type: String, schemaVersion: UInt16,
        recordedAt: EventTime, commandID: CommandID, correlationID: CorrelationID, actor: String, payload: [UInt8]
    ) {
        self.position = position
        self.stream = stream
        self.streamVersion = streamVersion
        self.type = type
        self.schemaVersion = schemaVersion
        self.recordedAt = recordedAt
        self.commandID = commandID
        self.correlationID = correlationID
        self.actor = actor
        self.payload = payload
    }
}
