import ChorusDomain
import ChorusLog
import ChorusStorage

/// What each user has read: their notifications up to a position, each conversation up to its last
/// ``ConversationRead``; and which conversations hold messages they have not read. Unread counts and read receipts
/// are read from these and from ``Notifications`` and ``Conversations``.
struct ReadMarks: ReadModel {
    /// user → the position their notifications are read up to
    static let notificationReads: StoreTableDefinition = "notification-reads"
    /// reader, partner → the position of the reader's last read of the conversation
    static let conversationReads: StoreTableDefinition = "conversation-reads"
    /// user, partner → empty, while the conversation holds a message from the partner the user has not read
    static let unreadConversations: StoreTableDefinition = "unread-conversations"
    static let tables = [notificationReads, conversationReads, unreadConversations]
    /// No model reads them while a build replays the log.
    static let tablesLoadedInKeyOrder = [notificationReads, conversationReads, unreadConversations]

    let notificationReads: StoreTable
    let conversationReads: StoreTable
    let unreadConversations: StoreTable

    init(store: KeyValueStore) {
        notificationReads = store.table(Self.notificationReads)
        conversationReads = store.table(Self.conversationReads)
        unreadConversations = store.table(Self.unreadConversations)
    }

    func apply(_ event: DomainEvent, at envelope: EventEnvelope, in transaction: StoreTransaction) throws {
        switch event {
        case .notificationsRead(let event):
            try transaction.put(
                PositionValue.encode(event.upTo), for: ProjectionKey(event.user).bytes, in: notificationReads)
        case .conversationRead(let event):
            let key = Self.pairKey(event.reader, event.partner)
            try transaction.put(PositionValue.encode(envelope.position), for: key, in: conversationReads)
            try transaction.delete(key, in: unreadConversations)
        case .messageSent(let event):
            try transaction.put([], for: Self.pairKey(event.to, event.from), in: unreadConversations)
        default:
            break
        }
    }

    /// `user`'s key for their conversation with `partner`.
    static func pairKey(_ user: UserID, _ partner: UserID) -> [UInt8] {
        var key = ProjectionKey(user)
        key.append(partner)
        return key.bytes
    }
}

extension ReadView {
    /// Unread counts stop here: a badge shows "999+" past it, and counting further would read ever more.
    public static let unreadCountLimit: UInt64 = 999

    /// How many of `user`'s notifications came after the one they read up to (at most ``unreadCountLimit``), leaving
    /// out those hidden from them as their notifications list does.
    public func unreadNotifications(of user: UserID) throws -> UInt64 {
        let read = try transaction.position(under: ProjectionKey(user).bytes, in: models.readMarks.notificationReads)
        var start = ProjectionKey(user)
        start.append((read ?? .start).next)
        let prefix = ProjectionKey(user).prefix()
        let filtering = try hidesAnyone(from: user)
        var count: UInt64 = 0
        try transaction.scan(models.notifications.notifications, from: start.bytes) { key, value in
            guard key.starts(with: prefix), count < Self.unreadCountLimit else { return false }
            if try !filtering || !hides(NotificationRecord(decoding: Array(value)).actor, from: user, muting: true) {
                count += 1
            }
            return true
        }
        return count
    }

    /// How many of `user`'s conversations hold a message they have not read.
    public func unreadConversations(of user: UserID) throws -> UInt64 {
        try transaction.count(prefix: ProjectionKey(user).prefix(), in: models.readMarks.unreadConversations)
    }

    /// How many messages from `partner` `user` has not read (at most ``unreadCountLimit``).
    public func unreadMessages(of user: UserID, from partner: UserID) throws -> UInt64 {
        let read = try readPosition(of: user, with: partner)
        var start = Conversations.pairPrefix(user, partner)
        let prefix = start.prefix()
        start.append((read ?? .start).next)
        var count: UInt64 = 0
        try transaction.scan(models.conversations.messages, from: start.bytes) { key, value in
            guard key.starts(with: prefix), count < Self.unreadCountLimit else { return false }
            if try MessageRecord(decoding: Array(value)).from == partner { count += 1 }
            return true
        }
        return count
    }

    /// The newest message `user` sent `partner` that `partner` has read: what a read receipt shows; nil if none.
    public func partnerReadUpTo(of user: UserID, with partner: UserID) throws -> MessageID? {
        guard let read = try readPosition(of: partner, with: user) else { return nil }
        var start = Conversations.pairPrefix(user, partner)
        let prefix = start.prefix()
        start.append(read)
        var found: MessageID?
        // Backwards from the read, which is itself no message: the first message from `user` before it.
        try transaction.scan(models.conversations.messages, from: start.bytes, direction: .backward) { key, value in
            guard key.starts(with: prefix) else { return false }
            let record = try MessageRecord(decoding: Array(value))
            if record.from == user { found = record.id }
            return found == nil
        }
        return found
    }

    /// The row of `user`'s recent-messages list with `partner`, whose last message is `last`.
    func conversation(of user: UserID, with partner: UserSummary, last: Message) throws -> Conversation {
        Conversation(
            partner: partner, lastMessage: last, unread: try unreadMessages(of: user, from: partner.id),
            partnerReadUpTo: try partnerReadUpTo(of: user, with: partner.id))
    }

    private func readPosition(of reader: UserID, with partner: UserID) throws -> LogPosition? {
        try transaction.position(
            under: ReadMarks.pairKey(reader, partner), in: models.readMarks.conversationReads)
    }
}
