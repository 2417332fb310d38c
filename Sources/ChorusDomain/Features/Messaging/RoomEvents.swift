import ChorusLog

/// A room was made. Its name belongs to the room, which its members share, not to its creator: it is not sealed, and
/// stays after the creator's account is erased. The creator joins it by a ``RoomJoined`` of the same command.
public struct RoomCreated: Sendable, Hashable {
    public var room: RoomID
    public var creator: UserID
    public var name: String
    public init(room: RoomID, creator: UserID, name: String) {
        self.room = room
        self.creator = creator
        self.name = name
    }
}

public struct RoomJoined: Sendable, Hashable {
    public var room: RoomID
    public var user: UserID
    public init(room: RoomID, user: UserID) {
        self.room = room
        self.user = user
    }
}

/// `joinedAt`, the position of the ``RoomJoined`` this ends, so that whoever follows the log can take out what it put
/// in without looking it up.
public struct RoomLeft: Sendable, Hashable {
    public var room: RoomID
    public var user: UserID
    public var joinedAt: LogPosition
    public init(room: RoomID, user: UserID, joinedAt: LogPosition) {
        self.room = room
        self.user = user
        self.joinedAt = joinedAt
    }
}

/// A message to everyone in a room, by one of its members; its text sealed under its sender's key, as a direct
/// message's.
public struct RoomMessageSent: Sendable, Hashable {
    public var message: MessageID
    public var room: RoomID
    public var from: UserID
    public var text: String
    public init(message: MessageID, room: RoomID, from: UserID, text: String) {
        self.message = message
        self.room = room
        self.from = from
        self.text = text
    }
}

extension RoomCreated: StoredEvent {
    static let typeName = "RoomCreated"
    static let schemaVersion: UInt16 = 1
    var stream: StreamID { .room(room) }
    var domainEvent: DomainEvent { .roomCreated(self) }

    func encode(to payload: inout PayloadWriter, keys: any PersonalDataKeys) throws {
        payload.write(room)
        payload.write(creator)
        payload.write(name)
    }

    init(from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys) throws {
        self.init(
            room: try payload.read(RoomID.self), creator: try payload.read(UserID.self), name: try payload.readString())
    }

    func changeState(_ state: DecisionState, at position: LogPosition, in changes: inout DecisionState.ChangeList) {
        changes.put(state.rooms, .init(room.rawValue), text: creator.rawValue)
    }
}

extension RoomJoined: StoredEvent {
    static let typeName = "RoomJoined"
    static let schemaVersion: UInt16 = 1
    var stream: StreamID { .room(room) }
    var domainEvent: DomainEvent { .roomJoined(self) }

    func encode(to payload: inout PayloadWriter, keys: any PersonalDataKeys) throws {
        payload.write(room)
        payload.write(user)
    }

    init(from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys) throws {
        self.init(room: try payload.read(RoomID.self), user: try payload.read(UserID.self))
    }

    func changeState(_ state: DecisionState, at position: LogPosition, in changes: inout DecisionState.ChangeList) {
        changes.put(state.roomMembers, .init(room.rawValue, user.rawValue), since: position)
    }
}

extension RoomLeft: StoredEvent {
    static let typeName = "RoomLeft"
    static let schemaVersion: UInt16 = 1
    var stream: StreamID { .room(room) }
    var domainEvent: DomainEvent { .roomLeft(self) }

    func encode(to payload: inout PayloadWriter, keys: any PersonalDataKeys) throws {
        payload.write(room)
        payload.write(user)
        payload.write(joinedAt.rawValue)
    }

    init(from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys) throws {
        self.init(
            room: try payload.read(RoomID.self), user: try payload.read(UserID.self),
            joinedAt: LogPosition(try payload.readUInt64()))
    }

    func changeState(_ state: DecisionState, at position: LogPosition, in changes: inout DecisionState.ChangeList) {
        changes.remove(state.roomMembers, .init(room.rawValue, user.rawValue))
    }
}

/// Sealed from its first version: the text under the sender's key.
extension RoomMessageSent: StoredEvent {
    static let typeName = "RoomMessageSent"
    static let schemaVersion: UInt16 = 1
    var stream: StreamID { .room(room) }
    var domainEvent: DomainEvent { .roomMessageSent(self) }

    func encode(to payload: inout PayloadWriter, keys: any PersonalDataKeys) throws {
        payload.write(message)
        payload.write(room)
        payload.write(from)
        try payload.writeSealed(by: from, in: Self.typeName, keys: keys) { $0.write(text) }
    }

    init(from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys) throws {
        let message = try payload.read(MessageID.self)
        let room = try payload.read(RoomID.self)
        let from = try payload.read(UserID.self)
        var fields = try payload.openSealed(by: from, in: Self.typeName, keys: keys)
        self.init(message: message, room: room, from: from, text: try fields?.readString() ?? "")
        try fields?.finish()
    }
}
