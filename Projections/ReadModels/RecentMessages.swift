import ChorusDomain
import ChorusLog
import ChorusStorage

/// Each user's recent-messages list: one row per partner, latest first.
///
/// Derived: a row is the last message of each conversation in ``Conversations``' `messages`, seen from both sides.
struct RecentMessages: DerivedReadModel {
    /// user, position of the latest message with a partner → partner
    static let recent: StoreTableDefinition = "recent"
    /// user, partner → that position (to move the row when a newer message comes)
    static let recentIndex: StoreTableDefinition = "recent-index"
    static let tables = [recent, recentIndex]
    /// Deriving writes each conversation's row under both of its users, out of key order.
    static let tablesLoadedInKeyOrder = [recent, recentIndex]

    let recent: StoreTable
    let recentIndex: StoreTable
    let messages: StoreTable

    init(store: KeyValueStore) {
        recent = store.table(Self.recent)
        recentIndex = store.table(Self.recentIndex)
        messages = store.table(Conversations.messages)
    }

    func apply(_ event: DomainEvent, at envelope: EventEnvelope, in transaction: StoreTransaction) throws {
        guard case .messageSent(let event) = event else { return }
        try moveToTop(
            of: Array(event.from.rawValue.utf8), partner: Array(event.to.rawValue.utf8), at: envelope.position,
            in: transaction)
        try moveToTop(
            of: Array(event.to.rawValue.utf8), partner: Array(event.from.rawValue.utf8), at: envelope.position,
            in: transaction)
    }

    func derive(in transaction: StoreTransaction) throws {
        // messages: smaller id, larger id, position. Each conversation's messages come in log order, so its last
        // entry is its latest message.
        var pair: [UInt8] = []
        var latest: LogPosition?
        func finishPair() throws {
            guard let latest, let separator = pair.firstIndex(of: 0) else { return }
            let smaller = Array(pair[..<separator])
            let larger = Array(pair[(separator + 1)...])
            try put(smaller, partner: larger, at: latest, in: transaction)
            try put(larger, partner: smaller, at: latest, in: transaction)
        }
        try transaction.scan(messages) { key, _ in
            let pairCount = key.count - 9
            if !key.prefix(pairCount).elementsEqual(pair) {
                try finishPair()
                pair = Array(key.prefix(pairCount))
            }
            latest = ProjectionKey.position(in: key, at: pairCount + 1)
            return true
        }
        try finishPair()
    }

    private func moveToTop(
        of user: [UInt8], partner: [UInt8], at position: LogPosition, in transaction: StoreTransaction
    ) throws {
        let index = user + [0] + partner
        if let previous = try transaction.position(under: index, in: recentIndex) {
            try transaction.delete(user + [0] + ProjectionKey.position(previous), in: recent)
        }
        try put(user, partner: partner, at: position, in: transaction)
    }

    /// The row of `user`'s conversation with `partner`, whose latest message is at `position`.
    private func put(_ user: [UInt8], partner: [UInt8], at position: LogPosition, in transaction: StoreTransaction)
        throws
    {
        try transaction.put(partner, for: user + [0] + ProjectionKey.position(position), in: recent)
        try transaction.put(PositionValue.encode(position), for: user + [0] + partner, in: recentIndex)
    }
}

/// A row of the recent-messages list.
public struct Conversation: Sendable, Hashable {
    public let partner: UserSummary
    public let lastMessage: Message
    /// Messages from the partner the user has not read (at most ``ReadView/unreadCountLimit``).
    public let unread: UInt64
    /// The newest of the user's messages the partner has read: the read receipt.
    public let partnerReadUpTo: MessageID?
}

extension ReadView {
    /// The recent-messages list: one row per partner, latest activity first.
    public func conversations(of user: UserID, page: PageRequest) throws -> Page<Conversation> {
        let prefix = ProjectionKey(user).prefix()
        return try transaction.page(models.recentMessages.recent, prefix: prefix, order: .newestFirst, request: page) {
            key, value in
            let partner = UserID(unchecked: String(decoding: value, as: UTF8.self))
            let position = ProjectionKey.position(in: key, at: prefix.count)
            guard let last = try message(between: user, and: partner, at: position) else {
                throw ProjectionError.inconsistent("no message behind the conversation of \(user) with \(partner)")
            }
            return try conversation(of: user, with: try requireSummary(partner), last: last)
        }
    }
}
