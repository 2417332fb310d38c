import ChorusLog

/// Follows a user; a private account's is asked instead (``FollowRequested``), and waits for its answer.
struct Follow: Decision {
    let follower: UserID
    let followee: UserID

    static func prepare(follower: UserID, followee: UserID) throws(DomainError) -> PreparedCommand {
        guard follower != followee else { throw DomainError(.selfFollow, "a user cannot follow themselves") }
        return PreparedCommand(
            caller: follower.rawValue, tag: 7, fields: { $0.write(followee) },
            decision: Follow(follower: follower, followee: followee))
    }

    func decide(in context: DecisionContext) throws -> CommandResult {
        try context.requireUser(follower)
        try context.requireUser(followee)
        try context.refuseIfBlocked(follower, followee)
        let state = context.state
        guard try !state.follow(follower, followee, in: context.transaction).exists,
            try !state.followRequest(follower, to: followee, in: context.transaction).exists
        else { return context.unchanged }
        guard try state.isPrivate(followee, in: context.transaction) else {
            return try context.record(.followed(Followed(follower: follower, followee: followee)))
        }
        return try context.record(.followRequested(FollowRequested(follower: follower, followee: followee)))
    }
}

/// Unfollows a user, or withdraws the request to follow them.
struct Unfollow: Decision {
    let follower: UserID
    let followee: UserID

    static func prepare(follower: UserID, followee: UserID) throws(DomainError) -> PreparedCommand {
        guard follower != followee else { throw DomainError(.selfFollow, "a user cannot unfollow themselves") }
        return PreparedCommand(
            caller: follower.rawValue, tag: 8, fields: { $0.write(followee) },
            decision: Unfollow(follower: follower, followee: followee))
    }

    func decide(in context: DecisionContext) throws -> CommandResult {
        try context.requireUser(follower)
        try context.requireUser(followee)
        let follow = try context.state.follow(follower, followee, in: context.transaction)
        guard follow.exists else {
            guard let since = try context.state.followRequest(follower, to: followee, in: context.transaction).since
            else { return context.unchanged }
            return try context.record(
                .followRequestEnded(
                    FollowRequestEnded(follower: follower, followee: followee, requestedAt: since, reason: .withdrawn)))
        }
        return try context.record(
            .unfollowed(Unfollowed(follower: follower, followee: followee, followedAt: follow.since)))
    }
}

/// A private account's answer to a pending request to follow it: accepted, the requester follows it; declined, the
/// request ends. A request that is not pending is 404 `not_found`.
struct AnswerFollowRequest: Decision {
    let followee: UserID
    let follower: UserID
    let accept: Bool

    static func prepare(followee: UserID, follower: UserID, accept: Bool) -> PreparedCommand {
        PreparedCommand(
            caller: followee.rawValue, tag: accept ? 47 : 48, fields: { $0.write(follower) },
            decision: AnswerFollowRequest(followee: followee, follower: follower, accept: accept))
    }

    func decide(in context: DecisionContext) throws -> CommandResult {
        try context.requireUser(followee)
        guard let since = try context.state.followRequest(follower, to: followee, in: context.transaction).since else {
            // An acceptance repeated changes nothing; anything else names no request.
            guard accept, try context.state.follow(follower, followee, in: context.transaction).exists else {
                throw DomainError(.notFound, "\(follower) has no pending request to follow you")
            }
            return context.unchanged
        }
        let event: DomainEvent =
            accept
            ? .followed(Followed(follower: follower, followee: followee, requestedAt: since))
            : .followRequestEnded(
                FollowRequestEnded(follower: follower, followee: followee, requestedAt: since, reason: .declined))
        return try context.record(event)
    }
}

/// Blocks a user: the follows and follow requests between the two end with it.
struct Block: Decision {
    let blocker: UserID
    let blocked: UserID

    static func prepare(blocker: UserID, blocked: UserID) throws(DomainError) -> PreparedCommand {
        try PreparedCommand(between: blocker, blocked, tag: 18, decision: Block(blocker: blocker, blocked: blocked))
    }

    func decide(in context: DecisionContext) throws -> CommandResult {
        try context.requireUser(blocker)
        try context.requireUser(blocked)
        guard try !context.state.block(blocker, blocked, in: context.transaction).exists else {
            return context.unchanged
        }
        var events = [DomainEvent.blocked(Blocked(blocker: blocker, blocked: blocked))]
        for (follower, followee) in [(blocker, blocked), (blocked, blocker)] {
            let follow = try context.state.follow(follower, followee, in: context.transaction)
            guard follow.exists else { continue }
            events.append(.unfollowed(Unfollowed(follower: follower, followee: followee, followedAt: follow.since)))
        }
        events += try context.state.withdrawnRequests(between: blocker, and: blocked, in: context.transaction)
        return try context.recordEach(events)
    }
}

struct Unblock: Decision {
    let blocker: UserID
    let blocked: UserID

    static func prepare(blocker: UserID, blocked: UserID) throws(DomainError) -> PreparedCommand {
        try PreparedCommand(between: blocker, blocked, tag: 19, decision: Unblock(blocker: blocker, blocked: blocked))
    }

    func decide(in context: DecisionContext) throws -> CommandResult {
        try context.requireUser(blocker)
        try context.requireUser(blocked)
        let block = try context.state.block(blocker, blocked, in: context.transaction)
        guard block.exists, let since = block.since else { return context.unchanged }
        return try context.record(.unblocked(Unblocked(blocker: blocker, blocked: blocked, blockedAt: since)))
    }
}

/// Hides a user's posts and notifications from the muter.
struct Mute: Decision {
    let muter: UserID
    let muted: UserID

    static func prepare(muter: UserID, muted: UserID) throws(DomainError) -> PreparedCommand {
        try PreparedCommand(between: muter, muted, tag: 20, decision: Mute(muter: muter, muted: muted))
    }

    func decide(in context: DecisionContext) throws -> CommandResult {
        try context.requireUser(muter)
        try context.requireUser(muted)
        guard try !context.state.mute(muter, muted, in: context.transaction).exists else { return context.unchanged }
        return try context.record(.muted(Muted(muter: muter, muted: muted)))
    }
}

struct Unmute: Decision {
    let muter: UserID
    let muted: UserID

    static func prepare(muter: UserID, muted: UserID) throws(DomainError) -> PreparedCommand {
        try PreparedCommand(between: muter, muted, tag: 21, decision: Unmute(muter: muter, muted: muted))
    }

    func decide(in context: DecisionContext) throws -> CommandResult {
        try context.requireUser(muter)
        try context.requireUser(muted)
        let mute = try context.state.mute(muter, muted, in: context.transaction)
        guard mute.exists, let since = mute.since else { return context.unchanged }
        return try context.record(.unmuted(Unmuted(muter: muter, muted: muted, mutedAt: since)))
    }
}

extension PreparedCommand {
    /// A block or a mute, and their undoing: of `user`, naming `other`, who must be someone else.
    fileprivate init(between user: UserID, _ other: UserID, tag: UInt8, decision: any Decision) throws(DomainError) {
        guard user != other else { throw DomainError(.invalidField, "a user cannot block or mute themselves") }
        self.init(caller: user.rawValue, tag: tag, fields: { $0.write(other) }, decision: decision)
    }
}
