/// One append: events for one stream, decided against the stream's current version, under one command id.
public struct AppendRequest: Sendable {
    /// Who may be named as an actor; the actor is stored in every record.
    public static let maximumActorLength = 200

    public var stream: StreamID
    public var expectedVersion: ExpectedVersion
    public var events: [NewEvent]
    public var commandID: CommandID
    public var correlationID: CorrelationID
    public var actor: String

    public init(
        stream: StreamID,
        expectedVersion: ExpectedVersion = .any,
        events: [NewEvent],
        commandID: CommandID = CommandID(),
        correlationID: CorrelationID? = nil,
        actor: String = ""
    ) {
        self.stream = stream
        self.expectedVersion = expectedVersion
        self.events = events
        self.commandID = commandID
        self.correlationID = correlationID ?? CorrelationID(commandID.uuid)
        self.actor = actor
    }

    /// Checks what the log can check without its contents: at least one event, the actor's length, each event's
    /// type and payload; ``EventLogError/Code/invalidAppend`` otherwise.
    public func validate() throws(EventLogError) {
        guard !events.isEmpty else { throw .invalidAppend("an append needs at least one event") }
        guard actor.utf8.count <= Self.maximumActorLength else {
            throw .invalidAppend("an actor must be at most \(Self.maximumActorLength) UTF-8 bytes")
        }
        for event in events { try event.validate() }
    }
}

/// What an append did, or, for a repeated command id, what the original append did.
public struct AppendOutcome: Sendable, Hashable {
    public let firstPosition: LogPosition
    public let lastPosition: LogPosition
    /// The stream's version after the append.
    public let streamVersion: UInt64
    /// True when the command id had already been appended: nothing was appended this time.
    public let isReplay: Bool

    public init(firstPosition: LogPosition, lastPosition: LogPosition, streamVersion: UInt64, isReplay: Bool) {
        self.firstPosition = firstPosition
        self.lastPosition = lastPosition
        self.streamVersion = streamVersion
        self.isReplay = isReplay
    }
}
