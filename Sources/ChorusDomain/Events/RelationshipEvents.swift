import ChorusLog

public struct Followed: Sendable, Hashable {
    public var follower: UserID
    public var followee: UserID
    public init(follower: UserID, followee: UserID) {
        self.follower = follower
        self.followee = followee
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
