import ChorusLog

/// `follower` follows `followee` from now on. `requestedAt`: the position of the ``FollowRequested`` this accepts,
/// when the followee is private (or was, and turned public with the request pending); nil for a plain follow.
public struct Followed: Sendable, Hashable {
    public var follower: UserID
    public var followee: UserID
    public var requestedAt: LogPosition?
    public init(follower: UserID, followee: UserID, requestedAt: LogPosition? = nil) {
        self.follower = follower
        self.followee = followee
        self.requestedAt = requestedAt
    }
}

/// `follower` asked to follow `followee`, a private account: pending until it is accepted (a ``Followed`` with its
/// position), declined, or withdrawn (``FollowRequestEnded``).
public struct FollowRequested: Sendable, Hashable {
    public var follower: UserID
    public var followee: UserID
    public init(follower: UserID, followee: UserID) {
        self.follower = follower
        self.followee = followee
    }
}

/// A pending follow request that ends without a follow: the followee declined it, or the follower withdrew it (also
/// when either blocks the other, or deletes their account). `requestedAt`: the position of its ``FollowRequested``.
public struct FollowRequestEnded: Sendable, Hashable {
    public enum Reason: UInt8, Sendable, Hashable {
        case withdrawn = 1
        case declined = 2
    }

    public var follower: UserID
    public var followee: UserID
    public var requestedAt: LogPosition
    public var reason: Reason
    public init(follower: UserID, followee: UserID, requestedAt: LogPosition, reason: Reason) {
        self.follower = follower
        self.followee = followee
        self.requestedAt = requestedAt
        self.reason = reason
    }
}

/// `followedAt`, the position of the follow this takes back (as `likedAt` in ``Unliked``); nil only in events
/// recorded before schema version 2.
public struct Unfollowed: Sendable, Hashable {
    public var follower: UserID
    public var followee: UserID
    public var followedAt: LogPosition?
    public init(follower: UserID, followee: UserID, followedAt: LogPosition?) {
        self.follower = follower
        self.followee = followee
        self.followedAt = followedAt
    }
}

/// `blocker` blocked `blocked`: neither can reach the other any more. The follows between them end by ``Unfollowed``
/// events of the same command.
public struct Blocked: Sendable, Hashable {
    public var blocker: UserID
    public var blocked: UserID
    public init(blocker: UserID, blocked: UserID) {
        self.blocker = blocker
        self.blocked = blocked
    }
}

/// `blockedAt`: the position of the block this lifts.
public struct Unblocked: Sendable, Hashable {
    public var blocker: UserID
    public var blocked: UserID
    public var blockedAt: LogPosition
    public init(blocker: UserID, blocked: UserID, blockedAt: LogPosition) {
        self.blocker = blocker
        self.blocked = blocked
        self.blockedAt = blockedAt
    }
}

/// `muter` no longer sees `muted`'s posts in feeds, nor notifications of what `muted` does.
public struct Muted: Sendable, Hashable {
    public var muter: UserID
    public var muted: UserID
    public init(muter: UserID, muted: UserID) {
        self.muter = muter
        self.muted = muted
    }
}

/// `mutedAt`: the position of the mute this lifts.
public struct Unmuted: Sendable, Hashable {
    public var muter: UserID
    public var muted: UserID
    public var mutedAt: LogPosition
    public init(muter: UserID, muted: UserID, mutedAt: LogPosition) {
        self.muter = muter
        self.muted = muted
        self.mutedAt = mutedAt
    }
}

/// Version 2 appends the position of the request it accepts (version 1: `requestedAt` nil).
extension Followed: StoredEvent {
    static let typeName = "Followed"
    static let schemaVersion: UInt16 = 2
    var stream: StreamID { .user(follower) }
    var domainEvent: DomainEvent { .followed(self) }

    func encode(to payload: inout PayloadWriter, keys: any PersonalDataKeys) throws {
        payload.write(follower)
        payload.write(followee)
        payload.write(requestedAt)
    }

    init(from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys) throws {
        self.init(
            follower: try payload.read(UserID.self), followee: try payload.read(UserID.self),
            requestedAt: version >= 2 ? try payload.readOptionalPosition() : nil)
    }

    func changeState(_ state: DecisionState, at position: LogPosition, in changes: inout DecisionState.ChangeList) {
        changes.put(state.follows, .init(follower.rawValue, followee.rawValue), since: position)
        if requestedAt != nil { changes.remove(state.followRequests, .init(followee.rawValue, follower.rawValue)) }
    }
}

extension FollowRequested: StoredEvent {
    static let typeName = "FollowRequested"
    static let schemaVersion: UInt16 = 1
    var stream: StreamID { .user(follower) }
    var domainEvent: DomainEvent { .followRequested(self) }

    func encode(to payload: inout PayloadWriter, keys: any PersonalDataKeys) throws {
        payload.write(follower)
        payload.write(followee)
    }

    init(from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys) throws {
        self.init(follower: try payload.read(UserID.self), followee: try payload.read(UserID.self))
    }

    func changeState(_ state: DecisionState, at position: LogPosition, in changes: inout DecisionState.ChangeList) {
        changes.put(state.followRequests, .init(followee.rawValue, follower.rawValue), since: position)
    }
}

extension FollowRequestEnded: StoredEvent {
    static let typeName = "FollowRequestEnded"
    static let schemaVersion: UInt16 = 1
    var stream: StreamID { .user(follower) }
    var domainEvent: DomainEvent { .followRequestEnded(self) }

    func encode(to payload: inout PayloadWriter, keys: any PersonalDataKeys) throws {
        payload.write(follower)
        payload.write(followee)
        payload.write(requestedAt.rawValue)
        payload.write(reason.rawValue)
    }

    init(from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys) throws {
        let (follower, followee) = (try payload.read(UserID.self), try payload.read(UserID.self))
        let requestedAt = LogPosition(try payload.readUInt64())
        let flag = try payload.readByte()
        guard let reason = Reason(rawValue: flag) else { throw PayloadError.badFlag(flag) }
        self.init(follower: follower, followee: followee, requestedAt: requestedAt, reason: reason)
    }

    func changeState(_ state: DecisionState, at position: LogPosition, in changes: inout DecisionState.ChangeList) {
        changes.remove(state.followRequests, .init(followee.rawValue, follower.rawValue))
    }
}

/// Version 2 appends the position of the follow (version 1: `followedAt` nil).
extension Unfollowed: StoredEvent {
    static let typeName = "Unfollowed"
    static let schemaVersion: UInt16 = 2
    var stream: StreamID { .user(follower) }
    var domainEvent: DomainEvent { .unfollowed(self) }

    func encode(to payload: inout PayloadWriter, keys: any PersonalDataKeys) throws {
        payload.write(follower)
        payload.write(followee)
        payload.write(followedAt)
    }

    init(from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys) throws {
        self.init(
            follower: try payload.read(UserID.self), followee: try payload.read(UserID.self),
            followedAt: version >= 2 ? try payload.readOptionalPosition() : nil)
    }

    func changeState(_ state: DecisionState, at position: LogPosition, in changes: inout DecisionState.ChangeList) {
        changes.remove(state.follows, .init(follower.rawValue, followee.rawValue))
    }
}

extension Blocked: StoredEvent {
    static let typeName = "Blocked"
    static let schemaVersion: UInt16 = 1
    var stream: StreamID { .user(blocker) }
    var domainEvent: DomainEvent { .blocked(self) }

    func encode(to payload: inout PayloadWriter, keys: any PersonalDataKeys) throws {
        payload.write(blocker)
        payload.write(blocked)
    }

    init(from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys) throws {
        self.init(
            blocker: try payload.read(UserID.self), blocked: try payload.read(UserID.self))
    }

    func changeState(_ state: DecisionState, at position: LogPosition, in changes: inout DecisionState.ChangeList) {
        changes.put(state.blocks, .init(blocker.rawValue, blocked.rawValue), since: position)
    }
}

extension Unblocked: StoredEvent {
    static let typeName = "Unblocked"
    static let schemaVersion: UInt16 = 1
    var stream: StreamID { .user(blocker) }
    var domainEvent: DomainEvent { .unblocked(self) }

    func encode(to payload: inout PayloadWriter, keys: any PersonalDataKeys) throws {
        payload.write(blocker)
        payload.write(blocked)
        payload.write(blockedAt.rawValue)
    }

    init(from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys) throws {
        self.init(
            blocker: try payload.read(UserID.self), blocked: try payload.read(UserID.self),
            blockedAt: LogPosition(try payload.readUInt64()))
    }

    func changeState(_ state: DecisionState, at position: LogPosition, in changes: inout DecisionState.ChangeList) {
        changes.remove(state.blocks, .init(blocker.rawValue, blocked.rawValue))
    }
}

extension Muted: StoredEvent {
    static let typeName = "Muted"
    static let schemaVersion: UInt16 = 1
    var stream: StreamID { .user(muter) }
    var domainEvent: DomainEvent { .muted(self) }

    func encode(to payload: inout PayloadWriter, keys: any PersonalDataKeys) throws {
        payload.write(muter)
        payload.write(muted)
    }

    init(from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys) throws {
        self.init(
            muter: try payload.read(UserID.self), muted: try payload.read(UserID.self))
    }

    func changeState(_ state: DecisionState, at position: LogPosition, in changes: inout DecisionState.ChangeList) {
        changes.put(state.mutes, .init(muter.rawValue, muted.rawValue), since: position)
    }
}

extension Unmuted: StoredEvent {
    static let typeName = "Unmuted"
    static let schemaVersion: UInt16 = 1
    var stream: StreamID { .user(muter) }
    var domainEvent: DomainEvent { .unmuted(self) }

    func encode(to payload: inout PayloadWriter, keys: any PersonalDataKeys) throws {
        payload.write(muter)
        payload.write(muted)
        payload.write(mutedAt.rawValue)
    }

    init(from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys) throws {
        self.init(
            muter: try payload.read(UserID.self), muted: try payload.read(UserID.self),
            mutedAt: LogPosition(try payload.readUInt64()))
    }

    func changeState(_ state: DecisionState, at position: LogPosition, in changes: inout DecisionState.ChangeList) {
        changes.remove(state.mutes, .init(muter.rawValue, muted.rawValue))
    }
}
