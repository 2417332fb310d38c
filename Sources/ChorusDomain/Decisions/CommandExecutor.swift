import ChorusLog
import Synchronization

/// Executes commands: validates them, then decides each inside the event log writer's transaction, against the
/// decision state kept in that same transaction, and appends the resulting event.
public final class CommandExecutor: Sendable {
    public let log: any EventLog
    private let state: DecisionState
    private let media: any MediaCatalog
    private let hasher: PasswordHasher
    /// Where every bcrypt hash and check runs, bounded.
    private let passwordWork: PasswordWork
    /// Verified against when no user has the e-mail, so that a login takes as long either way.
    private let decoyHash: String
    /// Brings the decision state to this Chorus's format before the first decision (``DecisionStateUpgrade``).
    private let upgrade: StateUpgradeOnce

    /// `log` must have been opened with ``DecisionState/tableNames`` as its state tables. Sign-ups and logins past
    /// `passwordWork`'s bounds throw ``PasswordWorkBusy``.
    public init(
        log: any EventLog, media: any MediaCatalog, passwordHasher: PasswordHasher = PasswordHasher(),
        passwordWork: PasswordWork = PasswordWork()
    ) {
        self.log = log
        self.state = DecisionState()
        self.media = media
        self.hasher = passwordHasher
        self.passwordWork = passwordWork
        self.decoyHash = passwordHasher.hash("decoy password that no one has")
        self.upgrade = StateUpgradeOnce(log: log)
    }

    /// Recomputes the decision state if an older Chorus wrote it (a fold of the whole log, once); the first command
    /// does it otherwise. A server calls it at start, so that no request waits for it.
    public func upgradeDecisionState() async throws {
        try await upgrade.run()
    }

    /// Executes `command`, durably unless told otherwise (bulk import).
    ///
    /// With an `idempotencyKey` (scoped to the command's actor), a retry of the same request returns the first
    /// result and appends nothing, and another request under the same key is ``DomainError/Code/idempotencyConflict``.
    /// - Throws: ``DomainError`` when refused (nothing appended), ``PasswordWorkBusy`` when too many sign-ups and
    ///   logins wait already, or an ``EventLogError``.
    public func execute(
        _ command: Command, idempotencyKey: String? = nil, durability: WriteDurability = .durable
    ) async throws -> CommandResult {
        var prepared: PreparedCommand
        switch command {
        case .registerUser(_, let password, _, _, _):
            // bcrypt runs off the threads tasks run on, and never in the writer.
            let (media, hasher) = (self.media, self.hasher)
            let registration = try await passwordWork.run { try command.prepare(media: media, hasher: hasher) }
            // A replayed registration hands out a session, so it must know the password.
            if let idempotencyKey,
                let first = try await passwordWork.run({
                    try self.firstRegistration(registration, password: password, key: idempotencyKey)
                })
            {
                return first
            }
            prepared = registration
        case .logIn:
            prepared = try command.prepare(media: media, hasher: hasher)
            if case .logIn(let email, let password, let session, let expiresAt) = prepared.decision {
                // The writer checks again that the user exists.
                let user = try await passwordWork.run { try self.authenticate(email: email, password: password) }
                prepared.decision = .startSession(SessionStarted(session: session, user: user, expiresAt: expiresAt))
            }
        case .changePassword(let user, _, let currentPassword, _):
            let (media, hasher) = (self.media, self.hasher)
            prepared = try await passwordWork.run { try command.prepare(media: media, hasher: hasher) }
            // A retry finds the password changed: it is answered from the first result before any check.
            if let idempotencyKey, let first = try firstResult(prepared, key: idempotencyKey) { return first }
            let checked = try await passwordWork.run { try self.checkPassword(currentPassword, of: user) }
            if case .changePassword(let user, let keep, let newHash, _) = prepared.decision {
                prepared.decision = .changePassword(user: user, keep: keep, newHash: newHash, checkedHash: checked)
            }
        case .resetPassword:
            let (media, hasher) = (self.media, self.hasher)
            prepared = try await passwordWork.run { try command.prepare(media: media, hasher: hasher) }
            if let idempotencyKey, let first = try firstResult(prepared, key: idempotencyKey) { return first }
        default:
            prepared = try command.prepare(media: media, hasher: hasher)
        }
        try await upgrade.run()
        let state = self.state
        return try await log.append(durability, eventCount: 1) { [prepared] batch in
            if let idempotencyKey,
                let first = try state.idempotentResult(actor: prepared.actor, key: idempotencyKey, in: batch.state)
            {
                guard first.fingerprint == prepared.fingerprint else {
                    throw DomainError(
                        .idempotencyConflict, "idempotency key \(idempotencyKey) was used for another request")
                }
                if case .register = prepared.decision {
                    // It committed after the check above: its password was not checked against this one.
                    throw DomainError(
                        .idempotencyConflict, "a request with idempotency key \(idempotencyKey) was in flight")
                }
                return first.result
            }
            let wasEmpty = batch.head == .start
            let result = try Self.decide(prepared, state: state, in: batch)
            if wasEmpty { try DecisionStateUpgrade.stamp(in: batch.state, state: state) }
            if let idempotencyKey {
                try state.recordIdempotentResult(
                    result, fingerprint: prepared.fingerprint, actor: prepared.actor, key: idempotencyKey,
                    in: batch.state)
            }
            return result
        }
    }

    /// The user of a session that has neither ended nor expired at `now`; nil otherwise.
    public func user(ofSession session: SessionID, at now: EventTime = .now) throws -> UserID? {
        let state = self.state
        return try log.readState { transaction in
            guard let found = try state.session(session, in: transaction), now < found.expiresAt else { return nil }
            return found.user
        }
    }

    /// The first result recorded under `key` for `prepared`'s actor, if any; another request's is a conflict. The
    /// fingerprint leaves passwords out, so a retry with other passwords counts as the same request.
    private func firstResult(_ prepared: PreparedCommand, key: String) throws -> CommandResult? {
        let state = self.state
        guard let first = try log.readState({ try state.idempotentResult(actor: prepared.actor, key: key, in: $0) })
        else { return nil }
        guard first.fingerprint == prepared.fingerprint else {
            throw DomainError(.idempotencyConflict, "idempotency key \(key) was used for another request")
        }
        return first.result
    }

    /// The first result of a registration under `key`, if there is one and `password` is the one it registered.
    private func firstRegistration(_ prepared: PreparedCommand, password: String, key: String) throws -> CommandResult?
    {
        let state = self.state
        let first = try log.readState { transaction -> (fingerprint: UInt64, result: CommandResult, hash: String?)? in
            guard let first = try state.idempotentResult(actor: prepared.actor, key: key, in: transaction) else {
                return nil
            }
            let hash = try first.result.session.flatMap { try state.passwordHash(of: $0.user, in: transaction) }
            return (first.fingerprint, first.result, hash)
        }
        guard let first else { return nil }
        guard first.fingerprint == prepared.fingerprint, let hash = first.hash, hasher.verify(password, against: hash)
        else { throw DomainError(.idempotencyConflict, "idempotency key \(key) was used for another request") }
        return first.result
    }

    /// The stored hash of `user`'s password, if `password` is it; ``DomainError/Code/wrongPassword`` otherwise.
    private func checkPassword(_ password: String, of user: UserID) throws -> String {
        let state = self.state
        guard let hash = try log.readState({ try state.passwordHash(of: user, in: $0) }) else {
            throw DomainError(.unknownUser, "no user \(user)")
        }
        guard hasher.verify(password, against: hash) else {
            throw DomainError(.wrongPassword, "the current password is wrong")
        }
        return hash
    }

    /// The sessions of `user` that have neither ended nor expired at `now`, each with when it started, newest first
    /// (session ids sort by creation).
    public func sessions(of user: UserID, at now: EventTime = .now) throws -> [(
        session: SessionID, startedAt: EventTime
    )] {
        let state = self.state
        let lifetime = SessionStarted.lifetime.components.seconds * 1000
        return try log.readState { transaction in
            try state.sessions(of: user, in: transaction).compactMap { session in
                guard let found = try state.session(session, in: transaction), now < found.expiresAt else { return nil }
                // A session's expiry is its start plus the lifetime, both made by the command that started it.
                return (session, EventTime(millisecondsSince1970: found.expiresAt.millisecondsSince1970 - lifetime))
            }
        }.sorted { $0.session > $1.session }
    }

    /// The user with this e-mail and password; ``DomainError/Code/invalidCredentials`` otherwise.
    public func authenticate(email: String, password: String) throws -> UserID {
        let emailKey = Validate.emailKey(normalized(email))
        let state = self.state
        let found = try log.readState { transaction -> (UserID, String)? in
            // An e-mail no account can have (empty, or past LMDB's key size) simply finds none.
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
        _ command: PreparedCommand, state: DecisionState, in batch: any DecisionBatch
    ) throws -> CommandResult {
        let transaction = batch.state
        let unchanged = CommandResult(position: batch.head, appended: false, createdID: nil)
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
                AppendRequest(stream: events[0].stream, events: events.map { $0.encoded() }, actor: command.actor))
            for (offset, event) in events.enumerated() {
                try state.apply(
                    event, at: LogPosition(outcome.firstPosition.rawValue + UInt64(offset)), in: transaction)
            }
            return CommandResult(
                position: outcome.lastPosition, appended: true, createdID: created,
                session: session)
        }
        /// Appends each of `events` to its own stream, correlated with the first.
        func recordEach(_ events: [DomainEvent]) throws -> CommandResult {
            var correlation: CorrelationID?
            var last = batch.head
            for event in events {
                let request = AppendRequest(
                    stream: event.stream, events: [event.encoded()], correlationID: correlation, actor: command.actor)
                correlation = request.correlationID
                last = try batch.append(request).lastPosition
                try state.apply(event, at: last, in: transaction)
            }
            return CommandResult(position: last, appended: true, createdID: nil)
        }
        func requireUser(_ user: UserID) throws {
            guard try state.exists(user, in: transaction) else { throw DomainError(.unknownUser, "no user \(user)") }
        }
        /// The post's author; throws if there is no such post, or it was deleted (as a post a command names in its
        /// body).
        func requirePost(_ post: PostID) throws {
            guard try state.author(of: post, in: transaction) != nil else {
                throw DomainError(.unknownPost, "no post \(post)")
            }
        }
        /// Refuses what one user does to another when either blocked the other.
        func refuseIfBlocked(_ user: UserID, _ other: UserID) throws {
            guard user != other, try state.eitherBlocked(user, other, in: transaction) else { return }
            throw DomainError(.blocked, "one of the two users blocked the other")
        }
        /// Records the new password, revokes the open resets and ends every session but `keep`.
        func changePassword(of user: UserID, to hash: String, keeping keep: SessionID?) throws -> CommandResult {
            let change = PasswordChanged(
                user: user, passwordHash: hash, revokedResets: try state.resets(of: user, in: transaction))
            let ended = try state.sessions(of: user, in: transaction).filter { $0 != keep }
            return try record(
                [.passwordChanged(change)] + ended.map { .sessionEnded(SessionEnded(session: $0, user: user)) })
        }
        /// The post a command acts on (its path names it): unknown if there never was one, gone if it was deleted.
        func requireStandingPost(_ post: PostID) throws -> DecisionState.PostState {
            guard let found = try state.post(post, in: transaction) else {
                throw DomainError(.unknownPost, "no post \(post)")
            }
            guard !found.deleted else { throw DomainError(.gone, "post \(post) was deleted") }
            return found
        }

        switch command.decision {
        case .register(let event, let session):
            guard try state.user(withEmailKey: Validate.emailKey(event.email), in: transaction) == nil else {
                throw DomainError(.emailTaken, "\(event.email) is already registered")
            }
            return try record(
                .userRegistered(event), .sessionStarted(session), created: event.user.rawValue, session: session)
        case .logIn:
            preconditionFailure("execute turns a login into startSession once the password is checked")
        case .startSession(let session):
            try requireUser(session.user)
            guard try !state.isSuspended(session.user, in: transaction) else {
                throw DomainError(.suspended, "this account is suspended")
            }
            return try record(.sessionStarted(session), session: session)
        case .logOut(let user, let session):
            guard try state.session(session, in: transaction)?.user == user else { return unchanged }
            return try record(.sessionEnded(SessionEnded(session: session, user: user)))
        case .changePassword(let user, let keep, let newHash, let checkedHash):
            // Checked outside the writer; a change that came in between makes the check stale.
            guard try state.passwordHash(of: user, in: transaction) == checkedHash else {
                throw DomainError(.wrongPassword, "the password changed meanwhile")
            }
            return try changePassword(of: user, to: newHash, keeping: keep)
        case .requestPasswordReset(let emailKey, var reset):
            guard let user = try state.user(withEmailKey: emailKey, in: transaction) else { return unchanged }
            reset.user = user
            return try record(.passwordResetRequested(reset))
        case .resetPassword(let user, let reset, let newHash):
            guard let expiresAt = try state.reset(reset, of: user, in: transaction), batch.recordedAt < expiresAt else {
                throw DomainError(.invalidToken, "the reset token is unknown, used or expired")
            }
            try requireUser(user)
            return try changePassword(of: user, to: newHash, keeping: nil)
        case .editProfile(let event):
            try requireUser(event.user)
            return try record(.profileEdited(event))
        case .createPost(let event):
            try requireUser(event.author)
            if let original = event.repostOf {
                try requirePost(original)
                if let author = try state.author(of: original, in: transaction) {
                    try refuseIfBlocked(event.author, author)
                }
            }
            return try record(.postCreated(event), created: event.post.rawValue)
        case .editPost(let event):
            try requireUser(event.author)
            let post = try requireStandingPost(event.post)
            guard post.author == event.author else {
                throw DomainError(.forbidden, "only its author can edit post \(event.post)")
            }
            if event.text == "", !post.textMayBeEmpty {
                throw DomainError(.emptyText, "a post without an image or a reposted post needs text")
            }
            return try record(.postEdited(event))
        case .deletePost(let author, let post):
            try requireUser(author)
            guard let found = try state.post(post, in: transaction) else {
                throw DomainError(.unknownPost, "no post \(post)")
            }
            guard found.author == author else {
                throw DomainError(.forbidden, "only its author can delete post \(post)")
            }
            guard !found.deleted else { return unchanged }
            var deletions = [
                DomainEvent.postDeleted(
                    PostDeleted(post: post, author: author, postedAt: found.postedAt, repostOf: found.repostOf))
            ]
            // Its plain reposts show nothing of their own: they go with it.
            for repost in try state.plainReposts(of: post, in: transaction) {
                guard let plain = try state.post(repost, in: transaction), !plain.deleted else { continue }
                deletions.append(
                    .postDeleted(
                        PostDeleted(post: repost, author: plain.author, postedAt: plain.postedAt, repostOf: post)))
            }
            return try recordEach(deletions)
        case .like(let user, let post):
            try requireUser(user)
            let author = try requireStandingPost(post).author
            try refuseIfBlocked(user, author)
            guard try !state.like(user, post, in: transaction).exists else { return unchanged }
            return try record(.liked(Liked(user: user, post: post, postAuthor: author)))
        case .unlike(let user, let post):
            try requireUser(user)
            let author = try requireStandingPost(post).author
            let like = try state.like(user, post, in: transaction)
            guard like.exists else { return unchanged }
            return try record(.unliked(Unliked(user: user, post: post, postAuthor: author, likedAt: like.since)))
        case .addComment(var event):
            try requireUser(event.author)
            event.postAuthor = try requireStandingPost(event.post).author
            try refuseIfBlocked(event.author, event.postAuthor!)
            return try record(.commentAdded(event), created: event.comment.rawValue)
        case .deleteComment(let user, let post, let comment):
            try requireUser(user)
            let postAuthor = try requireStandingPost(post).author
            guard let found = try state.comment(comment, in: transaction), found.post == post else {
                throw DomainError(.notFound, "no comment \(comment) on post \(post)")
            }
            guard user == found.author || user == postAuthor else {
                throw DomainError(.forbidden, "only its author or the post's author can delete comment \(comment)")
            }
            guard !found.deleted else { return unchanged }
            return try record(
                .commentDeleted(
                    CommentDeleted(
                        comment: comment, post: post, author: found.author, postAuthor: postAuthor,
                        commentedAt: found.commentedAt)))
        case .block(let blocker, let blocked):
            try requireUser(blocker)
            try requireUser(blocked)
            guard try !state.block(blocker, blocked, in: transaction).exists else { return unchanged }
            // Both follows between them end with it.
            var events = [DomainEvent.blocked(Blocked(blocker: blocker, blocked: blocked))]
            for (follower, followee) in [(blocker, blocked), (blocked, blocker)] {
                let follow = try state.follow(follower, followee, in: transaction)
                guard follow.exists else { continue }
                events.append(
                    .unfollowed(Unfollowed(follower: follower, followee: followee, followedAt: follow.since)))
            }
            return try recordEach(events)
        case .unblock(let blocker, let blocked):
            try requireUser(blocker)
            try requireUser(blocked)
            let block = try state.block(blocker, blocked, in: transaction)
            guard block.exists, let since = block.since else { return unchanged }
            return try record(.unblocked(Unblocked(blocker: blocker, blocked: blocked, blockedAt: since)))
        case .mute(let muter, let muted):
            try requireUser(muter)
            try requireUser(muted)
            guard try !state.mute(muter, muted, in: transaction).exists else { return unchanged }
            return try record(.muted(Muted(muter: muter, muted: muted)))
        case .unmute(let muter, let muted):
            try requireUser(muter)
            try requireUser(muted)
            let mute = try state.mute(muter, muted, in: transaction)
            guard mute.exists, let since = mute.since else { return unchanged }
            return try record(.unmuted(Unmuted(muter: muter, muted: muted, mutedAt: since)))
        case .fileReport(var report, let subject):
            try requireUser(report.reporter)
            switch subject {
            case .post(let post):
                guard let author = try state.author(of: post, in: transaction) else {
                    throw DomainError(.unknownPost, "no post \(post)")
                }
                (report.target, report.targetAuthor) = (.post(post), author)
            case .comment(let comment):
                guard let found = try state.comment(comment, in: transaction), !found.deleted,
                    try state.author(of: found.post, in: transaction) != nil
                else { throw DomainError(.invalidField, "commentId: no comment \(comment)") }
                (report.target, report.targetAuthor) = (.comment(found.post, comment), found.author)
            case .user(let user):
                try requireUser(user)
                (report.target, report.targetAuthor) = (.user(user), user)
            }
            return try record(.reportFiled(report), created: report.report.rawValue)
        case .resolveReport(let id, let action):
            guard let report = try state.openReport(id, in: transaction) else {
                guard try state.isResolved(id, in: transaction) else {
                    throw DomainError(.notFound, "no report \(id)")
                }
                return unchanged
            }
            var events = [
                DomainEvent.reportResolved(ReportResolved(report: id, action: action, filedAt: report.filedAt))
            ]
            switch (action, report.target) {
            case (.dismiss, _):
                break
            case (.removeContent, .post(let post)):
                if let found = try state.post(post, in: transaction), !found.deleted {
                    events.append(
                        .postDeleted(
                            PostDeleted(
                                post: post, author: found.author, postedAt: found.postedAt, repostOf: found.repostOf)))
                    for repost in try state.plainReposts(of: post, in: transaction) {
                        guard let plain = try state.post(repost, in: transaction), !plain.deleted else { continue }
                        events.append(
                            .postDeleted(
                                PostDeleted(
                                    post: repost, author: plain.author, postedAt: plain.postedAt, repostOf: post)))
                    }
                }
            case (.removeContent, .comment(let post, let comment)):
                if let found = try state.comment(comment, in: transaction), !found.deleted,
                    let postAuthor = try state.author(of: post, in: transaction)
                {
                    events.append(
                        .commentDeleted(
                            CommentDeleted(
                                comment: comment, post: post, author: found.author, postAuthor: postAuthor,
                                commentedAt: found.commentedAt)))
                }
            case (.removeContent, .user):
                throw DomainError(.invalidField, "action: a reported user is dismissed or suspended, not removed")
            case (.suspendUser, _):
                let user = report.targetAuthor
                if try !state.isSuspended(user, in: transaction) {
                    events.append(.userSuspended(UserSuspended(user: user)))
                    for session in try state.sessions(of: user, in: transaction) {
                        events.append(.sessionEnded(SessionEnded(session: session, user: user)))
                    }
                }
            }
            return try recordEach(events)
        case .unsuspend(let user):
            try requireUser(user)
            guard try state.isSuspended(user, in: transaction) else { return unchanged }
            return try record(.userUnsuspended(UserUnsuspended(user: user)))
        case .follow(let follower, let followee):
            try requireUser(follower)
            try requireUser(followee)
            try refuseIfBlocked(follower, followee)
            guard try !state.follow(follower, followee, in: transaction).exists else { return unchanged }
            return try record(.followed(Followed(follower: follower, followee: followee)))
        case .unfollow(let follower, let followee):
            try requireUser(follower)
            try requireUser(followee)
            let follow = try state.follow(follower, followee, in: transaction)
            guard follow.exists else { return unchanged }
            return try record(.unfollowed(Unfollowed(follower: follower, followee: followee, followedAt: follow.since)))
        case .sendMessage(let event):
            try requireUser(event.from)
            try requireUser(event.to)
            try refuseIfBlocked(event.from, event.to)
            return try record(.messageSent(event), created: event.message.rawValue)
        }
    }
}

/// Runs a log's ``DecisionStateUpgrade`` once for everyone who waits on it; a failed run is tried again by the next
/// caller.
final class StateUpgradeOnce: Sendable {
    private let log: any EventLog
    private let done = Atomic<Bool>(false)
    private let running = Mutex<Task<Void, any Error>?>(nil)

    init(log: any EventLog) { self.log = log }

    func run() async throws {
        guard !done.load(ordering: .acquiring) else { return }
        let task = running.withLock { running in
            if let running { return running }
            let log = self.log
            let started = Task { _ = try await DecisionStateUpgrade(log: log).run() }
            running = started
            return started
        }
        do {
            try await task.value
            done.store(true, ordering: .releasing)
        } catch {
            running.withLock { if $0 == task { $0 = nil } }
            throw error
        }
    }
}
