import ChorusLog

/// Executes commands: validates them, then decides each inside the event log writer's transaction, against the
/// decision state kept in that same transaction, and appends the resulting event.
public final class CommandExecutor: Sendable {
    public let log: EventLog
    private let state: DecisionState
    private let media: any MediaCatalog
    private let hasher: PasswordHasher
    /// Verified against when no user has the e-mail, so that a login takes as long either way.
    private let decoyHash: String

    /// `log` must have been opened with ``DecisionState/tableNames`` as its state tables.
    public init(log: EventLog, media: any MediaCatalog, passwordHasher: PasswordHasher = PasswordHasher()) {
        self.log = log
        self.state = DecisionState(log: log)
        self.media = media
        self.hasher = passwordHasher
        self.decoyHash = passwordHasher.hash("decoy password that no one has")
    }

    /// Executes `command`, durably unless told otherwise (bulk import).
    ///
    /// With an `idempotencyKey` (scoped to the command's actor), a retry of the same request returns the first
    /// result and appends nothing, and another request under the same key is ``DomainError/Code/idempotencyConflict``.
    /// - Throws: ``DomainError`` when refused (nothing appended), or an ``EventLogError``.
    public func execute(
        _ command: Command, idempotencyKey: String? = nil, durability: WriteDurability = .durable
    ) async throws -> CommandResult {
        let prepared = try command.prepare(media: media, hasher: hasher)
        let state = self.state
        return try await log.perform(durability) { batch in
            if let idempotencyKey,
                let first = try state.idempotentResult(actor: prepared.actor, key: idempotencyKey, in: batch.state)
            {
                guard first.fingerprint == prepared.fingerprint else {
                    throw DomainError(.idempotencyConflict, "idempotency key \(idempotencyKey) was used for another request")
                }
                return first.result
            }
            let result = try Self.decide(prepared, state: state, in: batch)
            if let idempotencyKey {
                try state.recordIdempotentResult(
                    result, fingerprint: prepared.fingerprint, actor: prepared.actor, key: idempotencyKey,
                    in: batch.state)
            }
            return result
        }
    }

    /// The user with this e-mail and password; ``DomainError/Code/invalidCredentials`` otherwise.
    public func authenticate(email: String, password: String) throws -> UserID {
        let emailKey = Validate.emailKey(normalized(email))
        let state = self.state
        let found = try log.readState { transaction -> (UserID, String)? in
            guard let user = try state.user(withEmailKey: emailKey, in: transaction),
                let hash = try state.passwordHash(of: user, in: transaction)
            else { return nil }
            return (user, hash)
        }
        let matches = hasher.verify(password, against: found?.1 ?? decoyHash)
        guard let found, matches else { throw DomainError(.invalidCredentials, "the e-mail or the password is wrong") }
        return found.0
    }

    /// Decides inside the writer's transaction. Every check comes before the append and the state change, so a
    /// refusal writes nothing.
    private static func decide(
        _ command: PreparedCommand, state: DecisionState, in batch: LogWriteBatch
    ) throws -> CommandResult {
        let transaction = batch.state
        let unchanged = CommandResult(position: batch.head, appended: false, createdID: nil)
        func record(_ event: DomainEvent, created: String? = nil) throws -> CommandResult {
            let outcome = try batch.append(
                AppendRequest(stream: event.stream, events: [event.encoded()], actor: command.actor))
            try state.apply(event, in: transaction)
            return CommandResult(position: outcome.lastPosition, appended: true, createdID: created)
        }
        func requireUser(_ user: UserID) throws {
            guard try state.exists(user, in: transaction) else { throw DomainError(.unknownUser, "no user \(user)") }
        }
        func requirePost(_ post: PostID) throws {
            guard try state.exists(post, in: transaction) else { throw DomainError(.unknownPost, "no post \(post)") }
        }

        switch command.decision {
        case .register(let event):
            guard try state.user(withEmailKey: Validate.emailKey(event.email), in: transaction) == nil else {
                throw DomainError(.emailTaken, "\(event.email) is already registered")
            }
            return try record(.userRegistered(event), created: event.user.rawValue)
        case .editProfile(let event):
            try requireUser(event.user)
            return try record(.profileEdited(event))
        case .createPost(let event):
            try requireUser(event.author)
            if let original = event.repostOf { try requirePost(original) }
            return try record(.postCreated(event), created: event.post.rawValue)
        case .like(let user, let post):
            try requireUser(user)
            try requirePost(post)
            guard try !state.likes(user, post, in: transaction) else { return unchanged }
            return try record(.liked(Liked(user: user, post: post)))
        case .unlike(let user, let post):
            try requireUser(user)
            try requirePost(post)
            guard try state.likes(user, post, in: transaction) else { return unchanged }
            return try record(.unliked(Unliked(user: user, post: post)))
        case .addComment(let event):
            try requireUser(event.author)
            try requirePost(event.post)
            return try record(.commentAdded(event), created: event.comment.rawValue)
        case .follow(let follower, let followee):
            try requireUser(follower)
            try requireUser(followee)
            guard try !state.follows(follower, followee, in: transaction) else { return unchanged }
            return try record(.followed(Followed(follower: follower, followee: followee)))
        case .unfollow(let follower, let followee):
            try requireUser(follower)
            try requireUser(followee)
            guard try state.follows(follower, followee, in: transaction) else { return unchanged }
            return try record(.unfollowed(Unfollowed(follower: follower, followee: followee)))
        case .sendMessage(let event):
            try requireUser(event.from)
            try requireUser(event.to)
            return try record(.messageSent(event), created: event.message.rawValue)
        }
    }
}
