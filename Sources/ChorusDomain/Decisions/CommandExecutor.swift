import ChorusLog
import Synchronization

/// Executes commands: validates them, then decides each inside the event log writer's transaction, against the
/// decision state kept in that same transaction, and appends the resulting event.
public final class CommandExecutor: Sendable {
    public let log: any EventLog
    /// The users' data keys, which the events' personal fields are sealed under.
    public let keys: any PersonalDataKeys
    let state: DecisionState
    let media: any MediaCatalog
    let hasher: PasswordHasher
    /// Where every bcrypt hash and check runs, bounded.
    let passwordWork: PasswordWork
    /// Verified against when no user has the e-mail, so that a login takes as long either way.
    let decoyHash: String
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
        let prepared: PreparedCommand
        switch try await prepare(command, idempotencyKey: idempotencyKey) {
        case .answered(let first): return first
        case .prepared(let ready): prepared = ready
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
                if prepared.decision is RegisterUser {
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
        if let deletion = prepared.decision as? DeleteAccount, result.appended {
            // If this fails, the erasure that follows the deletion destroys it.
            try? destroyKey(of: deletion.user)
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

    /// The user registered with `email`, spelt as a person types it, unless they deleted their account.
    public func user(withEmail email: String) throws -> UserID? {
        let state = self.state
        let key = Validate.accountKey(forEmail: email)
        return try log.readState { try state.user(withEmailKey: key, in: $0) }
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
    func firstResult(_ prepared: PreparedCommand, key: String) throws -> CommandResult? {
        let state = self.state
        guard let first = try log.readState({ try state.idempotentResult(caller: prepared.caller, key: key, in: $0) })
        else { return nil }
        guard first.fingerprint == prepared.fingerprint else {
            throw DomainError(.idempotencyConflict, "idempotency key \(key) was used for another request")
        }
        return first.result
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
