import ChorusLog

/// Makes a room and joins its creator to it.
struct CreateRoom: Decision {
    let room: RoomCreated

    static func prepare(creator: UserID, name: String) throws(DomainError) -> PreparedCommand {
        let name = try Validate.title(name, field: "name", limit: FieldLimits.roomName, invalid: .emptyText)
        guard !name.isEmpty else { throw DomainError(.emptyText, "name is empty") }
        return PreparedCommand(
            caller: creator.rawValue, tag: 29, fields: { $0.write(name) },
            decision: CreateRoom(room: RoomCreated(room: .make(), creator: creator, name: name)))
    }

    func decide(in context: DecisionContext) throws -> CommandResult {
        try context.requireUser(room.creator)
        return try context.record(
            .roomCreated(room), .roomJoined(RoomJoined(room: room.room, user: room.creator)),
            created: room.room.rawValue)
    }
}

struct JoinRoom: Decision {
    let user: UserID
    let room: RoomID

    static func prepare(user: UserID, room: RoomID) -> PreparedCommand {
        PreparedCommand(
            caller: user.rawValue, tag: 30, fields: { $0.write(room) }, decision: JoinRoom(user: user, room: room))
    }

    func decide(in context: DecisionContext) throws -> CommandResult {
        try context.requireUser(user)
        try context.requireRoom(room)
        guard try !context.state.membership(of: user, in: room, state: context.transaction).exists else {
            return context.unchanged
        }
        return try context.record(.roomJoined(RoomJoined(room: room, user: user)))
    }
}

struct LeaveRoom: Decision {
    let user: UserID
    let room: RoomID

    static func prepare(user: UserID, room: RoomID) -> PreparedCommand {
        PreparedCommand(
            caller: user.rawValue, tag: 31, fields: { $0.write(room) }, decision: LeaveRoom(user: user, room: room))
    }

    func decide(in context: DecisionContext) throws -> CommandResult {
        try context.requireUser(user)
        try context.requireRoom(room)
        guard let since = try context.state.membership(of: user, in: room, state: context.transaction).since else {
            return context.unchanged
        }
        return try context.record(.roomLeft(RoomLeft(room: room, user: user, joinedAt: since)))
    }
}

/// A message to a room's members, by one of them.
struct SendRoomMessage: Decision {
    let message: RoomMessageSent

    static func prepare(from: UserID, room: RoomID, text: String) throws(DomainError) -> PreparedCommand {
        let text = try Validate.requiredText(text, field: "message", limit: FieldLimits.message)
        return PreparedCommand(
            caller: from.rawValue, tag: 32,
            fields: {
                $0.write(room)
                $0.write(text)
            },
            decision: SendRoomMessage(message: RoomMessageSent(message: .make(), room: room, from: from, text: text)))
    }

    func decide(in context: DecisionContext) throws -> CommandResult {
        try context.requireUser(message.from)
        try context.requireRoom(message.room)
        guard try context.state.membership(of: message.from, in: message.room, state: context.transaction).exists
        else { throw DomainError(.forbidden, "only members of room \(message.room) can write to it") }
        return try context.record(.roomMessageSent(message), created: message.message.rawValue)
    }
}

extension DecisionContext {
    fileprivate func requireRoom(_ room: RoomID) throws {
        guard try state.roomExists(room, in: transaction) else { throw DomainError(.notFound, "no room \(room)") }
    }
}
