import ChorusLog

public struct MessageSent: Sendable, Hashable {
    public var message: MessageID
    public var from: UserID
    public var to: UserID
    public var text: String
    public init(message: MessageID, from: UserID, to: UserID, text: String) {
        self.message = message
        self.from = from
        self.to = to
        self.text = text
    }
}

/// `reader` has read their conversation with `partner` up to this event: every message before it is read (what the
/// partner sees as a read receipt).
public struct ConversationRead: Sendable, Hashable {
    public var reader: UserID
    public var partner: UserID
    public init(reader: UserID, partner: UserID) {
        self.reader = reader
        self.partner = partner
    }
}

/// The user has seen their notifications up to the one made at `upTo`: those are no longer unread.
public struct NotificationsRead: Sendable, Hashable {
    public var user: UserID
    public var upTo: LogPosition
    public init(user: UserID, upTo: LogPosition) {
        self.user = user
        self.upTo = upTo
    }
}

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
