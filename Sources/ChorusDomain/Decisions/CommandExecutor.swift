import ChorusLog
import Synchronization

/// Executes commands: validates them, then decides each inside the event log writer's transaction, against the
/// decision state kept in that same transaction, and appends the resulting event.
public final class CommandExecutor: Sendable {
    public let log: any EventLog
    /// The users' data keys, which the events' personal fields are sealed under.
    public let keys: any PersonalDataKeys
    private let state: DecisionState
    private let media: any MediaCatalog
    private let hasher: PasswordHasher
    /// Where every bcrypt hash and check runs, bounded.
    private let passwordWork: PasswordWork
    /// Verified against when no user has the e-mail, so that a login takes as long either way.
    private let decoyHash: String
    /// Brings the decision state to this Chorus's format before the first decision (``DecisionStateUpgrade``).
    private let upgrade: StateUpgradeOnce
    /// Sessions found valid, answered again until the log removes a session (``KnownSessions``).
    private let knownSessions = KnownSessions()

    /// `log` must have been opened with ``DecisionState/tableNames`` as its state tables. Sign-ups and logins past
    /// `passwordWork`'s bounds throw ``PasswordWorkBusy``.
    public init(
        log: any EventLog, keys: any PersonalDataKeys, media: any MediaCatalog,
        passwordHasher: PasswordHasher = PasswordHasher(), passwordWork: PasswordWork = PasswordWork()
    ) {
        self.log = log
        self.keys = keys
        self.state = DecisionState()
        self.media = media
        self.hasher = passwordHasher
        self.passwordWork = passwordWork
        self.decoyHash = passwordHasher.hash("decoy password that no one has")
        self.upgrade = StateUpgradeOnce(log: log, keys: keys)
    }

    /// Recomputes the decision state if an older Chorus wrote it (a fold of the whole log, once); the first command
    /// does it otherwise. A server calls it at start, so that no request waits for it.
    public func upgradeDecisionState() async throws {
        try await upgrade.run()
    }

    /// Executes `command`, durably unless told otherwise (bulk import).
    ///
    /// With an `idempotencyKey` (scoped to the command's caller: its user, or the e-mail a registration claims), a
    /// retry of the same request returns the first result and appends nothing, and another request under the same key
    /// is ``DomainError/Code/idempotencyConflict``.
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
            // Made and stored durably before the writer seals the new user's fields under it.
            if case .register(let event, _) = registration.decision { _ = try keys.makeKey(for: event.user) }
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
        case .deleteAccount(let user, let password):
            prepared = try command.prepare(media: media, hasher: hasher)
            if let idempotencyKey, let first = try firstResult(prepared, key: idempotencyKey) { return first }
            let checked = try await passwordWork.run { try self.checkPassword(password, of: user) }
            prepared.decision = .deleteAccount(user, checkedHash: checked)
        case .resetPassword:
            let (media, hasher) = (self.media, self.hasher)
            prepared = try await passwordWork.run { try command.prepare(media: media, hasher: hasher) }
            if let idempotencyKey, let first = try firstResult(prepared, key: idempotencyKey) { return first }
        default:
            prepared = try command.prepare(media: media, hasher: hasher)
        }
        try await upgrade.run()
        let (state, keys) = (self.state, self.keys)
        let result = try await log.append(durability, eventCount: 1) { [prepared] batch in
            if let idempotencyKey,
                let first = try state.idempotentResult(caller: prepared.caller, key: idempotencyKey, in: batch.state)
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
            let result = try Self.decide(prepared, state: state, keys: keys, in: batch)
            if wasEmpty { try DecisionStateUpgrade.stamp(in: batch.state, state: state) }
            if let idempotencyKey {
                try state.recordIdempotentResult(
                    result, fingerprint: prepared.fingerprint, caller: prepared.caller, key: idempotencyKey,
                    in: batch.state)
            }
            return result
        }
        if case .deleteAccount(let user, _) = prepared.decision, result.appended {
            // If this fails, the erasure that follows the deletion destroys it.
            try? destroyKey(of: user)
        }
        return result
    }

    /// Destroys `user`'s data key, once their account is deleted: the sealed fields of their events can no longer be
    /// read. Repeats change nothing.
    public func destroyKey(of user: UserID) throws {
        try keys.destroy(user)
    }

    /// Every account deletion, with the positions of its ``AccountDeleted`` and, once complete, its
    /// ``ErasureCompleted``, in user id order.
    public func erasures() throws -> [DecisionState.Erasure] {
        let state = self.state
        return try log.readState { try state.erasures(in: $0) }
    }

    /// The user of a session that has neither ended nor expired at `now`; nil otherwise.
    public func user(ofSession session: SessionID, at now: EventTime = .now) throws -> UserID? {
        let state = self.state
        let removedAt = log.newestRemoval(from: state.sessions)
        if let removedAt, let known = knownSessions.found(session, removedAt: removedAt) {
            return now < known.expiresAt ? known.user : nil
        }
        let read = try log.readState { transaction -> (user: UserID, expiresAt: EventTime, at: LogPosition)? in
            guard let found = try state.session(session, in: transaction) else { return nil }
            return (found.user, found.expiresAt, try transaction.position)
        }
        guard let read else { return nil }
        if removedAt != nil {
            knownSessions.keep(session, user: read.user, expiresAt: read.expiresAt, readAt: read.at)
        }
        return now < read.expiresAt ? read.user : nil
    }

    /// The first result recorded under `key` for `prepared`'s caller, if any; another request's is a conflict. The
    /// fingerprint leaves passwords out, so a retry with other passwords counts as the same request.
    private func firstResult(_ prepared: PreparedCommand, key: String) throws -> CommandResult? {
        let state = self.state
        guard let first = try log.readState({ try state.idempotentResult(caller: prepared.caller, key: key, in: $0) })
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
            guard let first = try state.idempotentResult(caller: prepared.caller, key: key, in: transaction) else {
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
        let emailKey = Validate.accountKey(forEmail: email)
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
}

/// Runs a log's ``DecisionStateUpgrade`` once for everyone who waits on it; a failed run is tried again by the next
/// caller.
final class StateUpgradeOnce: Sendable {
    private let log: any EventLog
    private let done = Atomic<Bool>(false)
    private let running = Mutex<Task<Void, any Error>?>(nil)

    private let keys: any PersonalDataKeys

    init(log: any EventLog, keys: any PersonalDataKeys) {
        self.log = log
        self.keys = keys
    }

    func run() async throws {
        guard !done.load(ordering: .acquiring) else { return }
        let task = running.withLock { running in
            if let running { return running }
            let (log, keys) = (self.log, self.keys)
            let started = Task { _ = try await DecisionStateUpgrade(log: log, keys: keys).run() }
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
