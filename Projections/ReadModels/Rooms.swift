import ChorusDomain
import ChorusLog
import ChorusStorage

/// Chat rooms: who is in each, each user's rooms, and each room's messages in log order.
struct Rooms: ReadModel {
    /// room → ``RoomRecord``
    static let rooms: StoreTableDefinition = "rooms"
    /// position of its creation → room (every room, newest first)
    static let roomList: StoreTableDefinition = "room-list"
    /// room, user → position of the user's join
    static let members: StoreTableDefinition = "room-members"
    /// user, position of the join → room (the user's rooms, last joined first)
    static let userRooms: StoreTableDefinition = "user-rooms"
    /// room → members (``Counters``)
    static let counters: StoreTableDefinition = "room-counters"
    /// room, position → ``RoomMessageRecord``
    static let messages: StoreTableDefinition = "room-messages"
    static let tables = [rooms, roomList, members, userRooms, counters, messages]
    static let tablesLoadedInKeyOrder = [messages]

    let rooms: StoreTable
    let roomList: StoreTable
    let members: StoreTable
    let userRooms: StoreTable
    let counters: StoreTable
    let messages: StoreTable

    init(store: KeyValueStore) {
        rooms = store.table(Self.rooms)
        roomList = store.table(Self.roomList)
        members = store.table(Self.members)
        userRooms = store.table(Self.userRooms)
        counters = store.table(Self.counters)
        messages = store.table(Self.messages)
    }

    func apply(_ event: DomainEvent, at envelope: EventEnvelope, in transaction: StoreTransaction) throws {
        switch event {
        case .roomCreated(let event):
            let record = RoomRecord(name: event.name, creator: event.creator, createdAt: envelope.recordedAt)
            try transaction.put(record.encoded(), for: ProjectionKey(event.room).bytes, in: rooms)
            try transaction.put(
                Array(event.room.rawValue.utf8), for: ProjectionKey.position(envelope.position), in: roomList,
                append: true)
        case .roomJoined(let event):
            let keys = MembershipKeys(event.user, event.room, joinedAt: envelope.position)
            guard try transaction.value(for: keys.member, in: members) == nil else { return }
            try transaction.put(PositionValue.encode(envelope.position), for: keys.member, in: members)
            try transaction.put(Array(event.room.rawValue.utf8), for: keys.userRoom, in: userRooms)
            try transaction.addToCounter(0, of: ProjectionKey(event.room).bytes, by: 1, count: 1, in: counters)
        case .roomLeft(let event):
            let keys = MembershipKeys(event.user, event.room, joinedAt: event.joinedAt)
            guard try transaction.delete(keys.member, in: members) else { return }
            try transaction.delete(keys.userRoom, in: userRooms)
            try transaction.addToCounter(0, of: ProjectionKey(event.room).bytes, by: -1, count: 1, in: counters)
        case .roomMessageSent(let event):
            var key = ProjectionKey(event.room)
            key.append(envelope.position)
            let record = RoomMessageRecord(
                id: event.message, from: event.from, text: event.text, createdAt: envelope.recordedAt)
            try transaction.put(record.encoded(), for: key.bytes, in: messages)
        case .accountDeleted(let event):
            try eraseMessages(of: event.user, in: transaction)
        default:
            break
        }
    }

    /// Takes the text out of every room message `user` sent, as ``Conversations`` does for direct messages.
    private func eraseMessages(of user: UserID, in transaction: StoreTransaction) throws {
        try transaction.eraseText(of: user, in: messages, as: RoomMessageRecord.self)
    }
}

/// The keys a membership is kept under.
private struct MembershipKeys {
    let member: [UInt8]
    let userRoom: [UInt8]

    init(_ user: UserID, _ room: RoomID, joinedAt: LogPosition) {
        var member = ProjectionKey(room)
        member.append(user)
        var userRoom = ProjectionKey(user)
        userRoom.append(joinedAt)
        (self.member, self.userRoom) = (member.bytes, userRoom.bytes)
    }
}

struct RoomRecord: Hashable {
    var name: String
    var creator: UserID
    var createdAt: EventTime

    func encoded() -> [UInt8] {
        var writer = PayloadWriter()
        writer.write(name)
        writer.write(creator)
        writer.write(createdAt.millisecondsSince1970)
        return writer.bytes
    }

    init(name: String, creator: UserID, createdAt: EventTime) {
        (self.name, self.creator, self.createdAt) = (name, creator, createdAt)
    }

    init(decoding bytes: [UInt8]) throws {
        var reader = PayloadReader(bytes)
        name = try reader.readString()
        creator = try reader.read(UserID.self)
        createdAt = EventTime(millisecondsSince1970: try reader.readInt64())
        try reader.finish()
    }
}

struct RoomMessageRecord: SentMessageRecord, Hashable {
    var id: MessageID
    var from: UserID
    /// Nil once its sender's account was deleted.
    var text: String?
    var createdAt: EventTime

    func encoded() -> [UInt8] {
        var writer = PayloadWriter()
        writer.write(id)
        writer.write(from)
        writer.write(text)
        writer.write(createdAt.millisecondsSince1970)
        return writer.bytes
    }

    init(id: MessageID, from: UserID, text: String?, createdAt: EventTime) {
        (self.id, self.from, self.text, self.createdAt) = (id, from, text, createdAt)
    }

    init(decoding bytes: [UInt8]) throws {
        var reader = PayloadReader(bytes)
        id = try reader.read(MessageID.self)
        from = try reader.read(UserID.self)
        text = try reader.readOptionalString()
        createdAt = EventTime(millisecondsSince1970: try reader.readInt64())
        try reader.finish()
    }
}

/// A room as a screen shows it, from the viewer's point of view.
public struct Room: Sendable, Hashable {
    public let id: RoomID
    public let name: String
    public let members: UInt64
    public let createdAt: EventTime
    /// Whether the viewer is a member.
    public let isMember: Bool
}

/// A message to a room, with its sender's profile as of the view.
public struct RoomMessage: Sendable, Hashable {
    public let id: MessageID
    public let room: RoomID
    public let from: UserSummary
    /// Nil once its sender's account was deleted.
    public let text: String?
    public let createdAt: EventTime
}

extension ReadView {
    /// The room as `viewer` sees it; nil if there is no such room.
    public func room(_ room: RoomID, viewer: UserID) throws -> Room? {
        guard
            let record = try transaction.value(for: ProjectionKey(room).bytes, in: models.rooms.rooms).map(
                RoomRecord.init(decoding:))
        else { return nil }
        let members = try transaction.counters(ProjectionKey(room).bytes, count: 1, in: models.rooms.counters)[0]
        return Room(
            id: room, name: record.name, members: members, createdAt: record.createdAt,
            isMember: try isMember(viewer, of: room))
    }

    public func isMember(_ user: UserID, of room: RoomID) throws -> Bool {
        var member = ProjectionKey(room)
        member.append(user)
        return try transaction.withValue(for: member.bytes, in: models.rooms.members) { $0 != nil }
    }

    /// The rooms `user` is in, last joined first.
    public func rooms(of user: UserID, page: PageRequest) throws -> Page<Room> {
        try transaction.page(
            models.rooms.userRooms, prefix: ProjectionKey(user).prefix(), order: .newestFirst, request: page
        ) { _, value in try room(RoomID(unchecked: String(copying: value)), viewer: user) }
    }

    /// Every room, newest first, as `viewer` sees it.
    public func allRooms(viewer: UserID, page: PageRequest) throws -> Page<Room> {
        try transaction.page(models.rooms.roomList, prefix: [], order: .newestFirst, request: page) { _, value in
            try room(RoomID(unchecked: String(copying: value)), viewer: viewer)
        }
    }

    /// The room's messages, newest first unless asked otherwise.
    public func roomMessages(in room: RoomID, order: SortOrder = .newestFirst, page: PageRequest) throws -> Page<
        RoomMessage
    > {
        try transaction.page(
            models.rooms.messages, prefix: ProjectionKey(room).prefix(), order: order, request: page
        ) { _, value in try roomMessage(RoomMessageRecord(decoding: Array(value)), in: room) }
    }

    /// The room's message at `position`, if there is one.
    public func roomMessage(in room: RoomID, at position: LogPosition) throws -> RoomMessage? {
        var key = ProjectionKey(room)
        key.append(position)
        return try transaction.value(for: key.bytes, in: models.rooms.messages).map {
            try roomMessage(RoomMessageRecord(decoding: $0), in: room)
        }
    }

    private func roomMessage(_ record: RoomMessageRecord, in room: RoomID) throws -> RoomMessage {
        RoomMessage(
            id: record.id, room: room, from: try requireSummary(record.from), text: record.text,
            createdAt: record.createdAt)
    }
}
