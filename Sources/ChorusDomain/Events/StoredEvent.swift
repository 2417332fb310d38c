import ChorusLog

/// One kind of domain event, as the log stores it and the decision state follows it. Each event declares this beside
/// itself, in its feature's folder; ``DomainEvent`` lists them.
protocol StoredEvent: Sendable {
    /// The name the log stores the type under: never changed once written.
    static var typeName: String { get }
    /// The schema version the type is written with now; reading takes every version from 1 up to it.
    static var schemaVersion: UInt16 { get }
    /// The aggregate the event belongs to.
    var stream: StreamID { get }
    /// The event as a ``DomainEvent``.
    var domainEvent: DomainEvent { get }
    /// Writes the payload, personal fields sealed under their owner's key in `keys` (``PayloadWriter/writeSealed``).
    func encode(to payload: inout PayloadWriter, keys: any PersonalDataKeys) throws
    /// Reads a payload written with `version`, in the current shape.
    init(from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys) throws
    /// What the event, appended at `position`, changes in the decision state.
    func changeState(_ state: DecisionState, at position: LogPosition, in changes: inout DecisionState.ChangeList)
}

extension StoredEvent {
    /// Changes nothing: the default of the events that only add what read models show.
    func changeState(_ state: DecisionState, at position: LogPosition, in changes: inout DecisionState.ChangeList) {}

    /// Decodes a payload of this type, as a ``DomainEvent``.
    static func decodeEvent(
        from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys
    ) throws -> DomainEvent {
        try Self(from: &payload, version: version, keys: keys).domainEvent
    }
}

extension PayloadWriter {
    /// Writes what `fields` writes sealed under `owner`'s key (``SealedFields``), for an event of `type`.
    mutating func writeSealed(
        by owner: UserID, in type: String, keys: any PersonalDataKeys, _ fields: (inout PayloadWriter) -> Void
    ) throws {
        write(bytes: try SealedFields.seal(owner: owner, type: type, keys: keys, fields))
    }
}

extension PayloadReader {
    /// The reader of `owner`'s sealed fields in an event of `type`; nil once the owner was erased.
    mutating func openSealed(by owner: UserID, in type: String, keys: any PersonalDataKeys) throws
        -> PayloadReader?
    {
        try withBytes { try SealedFields.open($0, owner: owner, type: type, keys: keys) }
    }

}

/// The streams of Chorus's aggregates: a kind, a hyphen and an id. Ids are 26 characters of base32, so every name
/// here is a valid stream id.
extension StreamID {
    static func user(_ user: UserID) -> StreamID { StreamID(stringLiteral: "user-\(user)") }
    static func post(_ post: PostID) -> StreamID { StreamID(stringLiteral: "post-\(post)") }
    static func room(_ room: RoomID) -> StreamID { StreamID(stringLiteral: "room-\(room)") }
    static func report(_ report: ReportID) -> StreamID { StreamID(stringLiteral: "report-\(report)") }

    /// The conversation of two users: both ids, sorted.
    static func conversation(_ one: UserID, _ other: UserID) -> StreamID {
        StreamID(stringLiteral: "conversation-\(min(one, other))-\(max(one, other))")
    }
}
