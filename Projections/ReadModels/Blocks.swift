import ChorusDomain
import ChorusLog
import ChorusStorage

/// Who blocked and muted whom, and the lists of both; what every query consults to hide a blocked or muted user from
/// the viewer (``ReadView/relations(of:)``).
struct Blocks: ReadModel {
    /// user, other → flags: 1 the user blocked the other, 2 the other blocked the user (kept from both sides, so one
    /// read of the viewer's prefix finds everyone hidden from them)
    static let blocks: StoreTableDefinition = "blocks"
    /// blocker, position → blocked (the blocks list, newest first)
    static let blockList: StoreTableDefinition = "block-list"
    /// muter, muted → position of the mute
    static let mutes: StoreTableDefinition = "mutes"
    /// muter, position → muted
    static let muteList: StoreTableDefinition = "mute-list"

    static let tables = [blocks, blockList, mutes, muteList]

    let blocks: StoreTable
    let blockList: StoreTable
    let mutes: StoreTable
    let muteList: StoreTable

    init(store: KeyValueStore) {
        blocks = store.table(Self.blocks)
        blockList = store.table(Self.blockList)
        mutes = store.table(Self.mutes)
        muteList = store.table(Self.muteList)
    }

    func apply(_ event: DomainEvent, at envelope: EventEnvelope, in transaction: StoreTransaction) throws {
        switch event {
        case .blocked(let event):
            try flag(event.blocker, event.blocked, set: 1, in: transaction)
            try flag(event.blocked, event.blocker, set: 2, in: transaction)
            try transaction.put(
                Array(event.blocked.rawValue.utf8), for: Self.listKey(event.blocker, envelope.position), in: blockList)
        case .unblocked(let event):
            try flag(event.blocker, event.blocked, clear: 1, in: transaction)
            try flag(event.blocked, event.blocker, clear: 2, in: transaction)
            try transaction.delete(Self.listKey(event.blocker, event.blockedAt), in: blockList)
        case .muted(let event):
            var key = ProjectionKey(event.muter)
            key.append(event.muted)
            try transaction.put(PositionValue.encode(envelope.position), for: key.bytes, in: mutes)
            try transaction.put(
                Array(event.muted.rawValue.utf8), for: Self.listKey(event.muter, envelope.position), in: muteList)
        case .unmuted(let event):
            var key = ProjectionKey(event.muter)
            key.append(event.muted)
            try transaction.delete(key.bytes, in: mutes)
            try transaction.delete(Self.listKey(event.muter, event.mutedAt), in: muteList)
        default:
            break
        }
    }

    private static func listKey(_ owner: UserID, _ position: LogPosition) -> [UInt8] {
        var key = ProjectionKey(owner)
        key.append(position)
        return key.bytes
    }

    private func flag(
        _ user: UserID, _ other: UserID, set: UInt8 = 0, clear: UInt8 = 0, in transaction: StoreTransaction
    )
        throws
    {
        var key = ProjectionKey(user)
        key.append(other)
        let current = try transaction.withValue(for: key.bytes, in: blocks) { $0?.first } ?? 0
        let next = (current | set) & ~clear
        if next == 0 {
            try transaction.delete(key.bytes, in: blocks)
        } else {
            try transaction.put([next], for: key.bytes, in: blocks)
        }
    }
}

/// The users hidden from one viewer: read once per view, as a viewer has few (most have none). Ids are kept as
/// bytes, so that an id read in place (a post's author) is compared without making a string of it.
struct Relations {
    /// Blocked by the viewer (flag 1), or who blocked the viewer (flag 2): hidden everywhere.
    var blocked: [(id: [UInt8], flags: UInt8)] = []
    /// Muted by the viewer: hidden from the viewer's feeds and notifications.
    var muted: [[UInt8]] = []

    var isEmpty: Bool { blocked.isEmpty && muted.isEmpty }

    func blockFlags(of user: some Sequence<UInt8>) -> UInt8 {
        blocked.first { $0.id.elementsEqual(user) }?.flags ?? 0
    }

    func hasMuted(_ user: some Sequence<UInt8>) -> Bool { muted.contains { $0.elementsEqual(user) } }

    func hides(_ user: some Sequence<UInt8>, muting: Bool) -> Bool {
        blockFlags(of: user) != 0 || (muting && hasMuted(user))
    }
}

/// The relations read in one view, by viewer.
final class RelationMemo {
    var byViewer: [UserID: Relations] = [:]
    /// The ids of suspended users (``Moderation``), once read.
    var suspended: [[UInt8]]?
}

extension ReadView {
    /// Who is hidden from `viewer`.
    func relations(of viewer: UserID) throws -> Relations {
        if let known = relationMemo.byViewer[viewer] { return known }
        var found = Relations()
        let prefix = ProjectionKey(viewer).prefix()
        try transaction.scan(models.blocks.blocks, prefix: prefix) { key, value in
            found.blocked.append((Array(key[prefix.count...]), value.first ?? 0))
            return true
        }
        try transaction.scan(models.blocks.mutes, prefix: prefix) { key, _ in
            found.muted.append(Array(key[prefix.count...]))
            return true
        }
        relationMemo.byViewer[viewer] = found
        return found
    }

    /// Whether `user` is hidden from `viewer`: suspended (from everyone but themselves), blocked either way, or
    /// (`muting`) muted by the viewer.
    package func hides(_ user: UserID, from viewer: UserID?, muting: Bool = false) throws -> Bool {
        try hides(bytes: user.rawValue.utf8, from: viewer, muting: muting)
    }

    /// ``hides(_:from:muting:)`` for an id's bytes, such as one read in place (a post's author).
    func hides(bytes user: some Sequence<UInt8>, from viewer: UserID?, muting: Bool) throws -> Bool {
        if let viewer, user.elementsEqual(viewer.rawValue.utf8) { return false }
        if try suspendedIDs().contains(where: { $0.elementsEqual(user) }) { return true }
        guard let viewer else { return false }
        return try relations(of: viewer).hides(user, muting: muting)
    }

    /// Whether anyone at all is hidden from `viewer`: most of the time no one, and then nothing need be checked.
    func hidesAnyone(from viewer: UserID?) throws -> Bool {
        if try !suspendedIDs().isEmpty { return true }
        guard let viewer else { return false }
        return try !relations(of: viewer).isEmpty
    }

    /// Whether `viewer` blocked `user`, and whether `user` blocked `viewer`.
    public func block(between viewer: UserID, and user: UserID) throws -> (blocked: Bool, blockedBy: Bool) {
        let flags = try relations(of: viewer).blockFlags(of: user.rawValue.utf8)
        return (flags & 1 != 0, flags & 2 != 0)
    }

    /// Whether `viewer` muted `user`.
    public func hasMuted(_ viewer: UserID, _ user: UserID) throws -> Bool {
        try relations(of: viewer).hasMuted(user.rawValue.utf8)
    }

    /// The users `user` blocked, most recently first.
    public func blockedUsers(of user: UserID, page: PageRequest) throws -> Page<UserSummary> {
        try relationList(models.blocks.blockList, of: user, page: page)
    }

    /// The users `user` muted, most recently first.
    public func mutedUsers(of user: UserID, page: PageRequest) throws -> Page<UserSummary> {
        try relationList(models.blocks.muteList, of: user, page: page)
    }

    private func relationList(_ table: StoreTable, of user: UserID, page: PageRequest) throws -> Page<UserSummary> {
        try transaction.page(table, prefix: ProjectionKey(user).prefix(), order: .newestFirst, request: page) {
            _, value in
            try requireSummary(UserID(unchecked: String(decoding: value, as: UTF8.self)))
        }
    }
}
