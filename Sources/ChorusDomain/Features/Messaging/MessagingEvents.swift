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

/// Its stream is the conversation's: the two user ids, sorted. Version 2 seals the text under the sender's key;
/// version 1 holds it in plain.
extension MessageSent: StoredEvent {
    static let typeName = "MessageSent"
    static let schemaVersion: UInt16 = 2
    var stream: StreamID { .conversation(from, to) }
    var domainEvent: DomainEvent { .messageSent(self) }

    func encode(to payload: inout PayloadWriter, keys: any PersonalDataKeys) throws {
        payload.write(message)
        payload.write(from)
        payload.write(to)
        try payload.writeSealed(by: from, in: Self.typeName, keys: keys) { $0.write(text) }
    }

    init(from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys) throws {
        let message = try payload.read(MessageID.self)
        let from = try payload.read(UserID.self)
        let to = try payload.read(UserID.self)
        guard version >= 2 else {
            self.init(message: message, from: from, to: to, text: try payload.readString())
            return
        }
        var fields = try payload.openSealed(by: from, in: Self.typeName, keys: keys)
        self.init(message: message, from: from, to: to, text: try fields?.readString() ?? "")
        try fields?.finish()
    }

    func changeState(_ state: DecisionState, at position: LogPosition, in changes: inout DecisionState.ChangeList) {
        let (first, second) = DecisionState.pair(from, to)
        changes.put(state.conversationHeads, .init(first.rawValue, second.rawValue), since: position)
    }
}

extension ConversationRead: StoredEvent {
    static let typeName = "ConversationRead"
    static let schemaVersion: UInt16 = 1
    var stream: StreamID { .conversation(reader, partner) }
    var domainEvent: DomainEvent { .conversationRead(self) }

    func encode(to payload: inout PayloadWriter, keys: any PersonalDataKeys) throws {
        payload.write(reader)
        payload.write(partner)
    }

    init(from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys) throws {
        self.init(reader: try payload.read(UserID.self), partner: try payload.read(UserID.self))
    }

    func changeState(_ state: DecisionState, at position: LogPosition, in changes: inout DecisionState.ChangeList) {
        changes.put(state.conversationReads, .init(reader.rawValue, partner.rawValue), since: position)
    }
}

extension NotificationsRead: StoredEvent {
    static let typeName = "NotificationsRead"
    static let schemaVersion: UInt16 = 1
    var stream: StreamID { .user(user) }
    var domainEvent: DomainEvent { .notificationsRead(self) }

    func encode(to payload: inout PayloadWriter, keys: any PersonalDataKeys) throws {
        payload.write(user)
        payload.write(upTo.rawValue)
    }

    init(from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys) throws {
        self.init(user: try payload.read(UserID.self), upTo: LogPosition(try payload.readUInt64()))
    }

    func changeState(_ state: DecisionState, at position: LogPosition, in changes: inout DecisionState.ChangeList) {
        changes.put(state.notificationReads, .init(user.rawValue), since: upTo)
    }
}
