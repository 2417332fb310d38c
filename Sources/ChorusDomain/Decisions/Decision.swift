import ChorusLog

/// What is left of a command once prepared (``PreparedCommand``): deciding it inside the log writer's transaction,
/// against the decision state kept there. Each command declares its own beside its preparation, in its feature's
/// folder.
protocol Decision: Sendable {
    /// Checks the command against the state, then appends its events. Every check comes before the append and the
    /// state change, so a refusal writes nothing.
    func decide(in context: DecisionContext) throws -> CommandResult
}

/// A decision's view of the writer's transaction: the state to check, and the appends that record events and apply
/// their changes to the state in the same write.
struct DecisionContext {
    let state: DecisionState
    /// The state as of every event before this decision, in the same write.
    let transaction: any StateWriter
    let batch: any DecisionBatch
    let keys: any PersonalDataKeys
    /// Who asks, as the log records it (``PreparedCommand/actor``).
    let actor: String

    /// The answer of a command that changes nothing: the head, so that reading there shows the state it found.
    var unchanged: CommandResult { unchanged(created: nil) }

    func unchanged(created: String?) -> CommandResult {
        CommandResult(position: batch.head, appended: false, createdID: created)
    }

    /// Appends `events`, which share one stream.
    func record(_ events: DomainEvent..., created: String? = nil, session: SessionStarted? = nil) throws
        -> CommandResult
    {
        try record(events, created: created, session: session)
    }

    func record(_ events: [DomainEvent], created: String? = nil, session: SessionStarted? = nil) throws
        -> CommandResult
    {
        let outcome = try batch.append(
            AppendRequest(stream: events[0].stream, events: try events.map { try $0.encoded(keys: keys) }, actor: actor)
        )
        for (offset, event) in events.enumerated() {
            try state.apply(event, at: LogPosition(outcome.firstPosition.rawValue + UInt64(offset)), in: transaction)
        }
        return CommandResult(position: outcome.lastPosition, appended: true, createdID: created, session: session)
    }

    /// Appends each of `events` to its own stream, correlated with the first.
    func recordEach(_ events: [DomainEvent]) throws -> CommandResult {
        var correlation: CorrelationID?
        var last = batch.head
        for event in events {
            let request = AppendRequest(
                stream: event.stream, events: [try event.encoded(keys: keys)], correlationID: correlation, actor: actor)
            correlation = request.correlationID
            last = try batch.append(request).lastPosition
            try state.apply(event, at: last, in: transaction)
        }
        return CommandResult(position: last, appended: true, createdID: nil)
    }

    func requireUser(_ user: UserID) throws {
        guard try state.exists(user, in: transaction) else { throw DomainError(.unknownUser, "no user \(user)") }
    }

    /// Throws if there is no such post, or it was deleted (as a post a command names in its body).
    func requirePost(_ post: PostID) throws {
        guard try state.author(of: post, in: transaction) != nil else {
            throw DomainError(.unknownPost, "no post \(post)")
        }
    }

    /// The post a command acts on (its path names it): unknown if there never was one, gone if it was deleted.
    func requireStandingPost(_ post: PostID) throws -> DecisionState.PostState {
        guard let found = try state.post(post, in: transaction) else {
            throw DomainError(.unknownPost, "no post \(post)")
        }
        guard !found.deleted else { throw DomainError(.gone, "post \(post) was deleted") }
        return found
    }

    /// Refuses what one user does to another when either blocked the other.
    func refuseIfBlocked(_ user: UserID, _ other: UserID) throws {
        guard user != other, try state.eitherBlocked(user, other, in: transaction) else { return }
        throw DomainError(.blocked, "one of the two users blocked the other")
    }

    /// Refuses what `user` does to a post by `author` when either blocked the other, or the author's account is private
    /// and `user` is not one of its followers: such a post is not there for them.
    func refuseUnlessReadable(by user: UserID, postsOf author: UserID) throws {
        try refuseIfBlocked(user, author)
        guard user != author, try state.isPrivate(author, in: transaction),
            try !state.follow(user, author, in: transaction).exists
        else { return }
        throw DomainError(.privateAccount, "only the followers of \(author) see their posts")
    }
}
