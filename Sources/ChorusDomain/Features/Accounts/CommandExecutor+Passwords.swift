import ChorusLog

/// The account commands that take a password: bcrypt runs off the threads tasks run on (``PasswordWork``) and never in
/// the writer, and a password is checked against the stored hash before the decision, which checks that the hash is
/// still the one checked.
extension CommandExecutor {
    /// A command made ready for the writer, or the answer a retry under an idempotency key already has.
    enum Preparation {
        case prepared(PreparedCommand)
        case answered(CommandResult)
    }

    /// Prepares `command` (``Command/prepare(media:hasher:now:)``), doing its password work first.
    func prepare(_ command: Command, idempotencyKey: String?) async throws -> Preparation {
        let (media, hasher) = (self.media, self.hasher)
        switch command {
        case .registerUser(_, let password, _, _, _, _):
            let registration = try await passwordWork.run { try command.prepare(media: media, hasher: hasher) }
            // A replayed registration hands out a session, so it must know the password.
            if let idempotencyKey,
                let first = try await passwordWork.run({
                    try self.firstRegistration(registration, password: password, key: idempotencyKey)
                })
            {
                return .answered(first)
            }
            // Made and stored durably before the writer seals the new user's fields under it.
            if let registering = registration.decision as? RegisterUser {
                _ = try keys.makeKey(for: registering.registered.user)
            }
            return .prepared(registration)
        case .logIn:
            var prepared = try command.prepare(media: media, hasher: hasher)
            guard let login = prepared.decision as? LogIn else { return .prepared(prepared) }
            // The writer checks again that the user exists.
            let user = try await passwordWork.run {
                try self.authenticate(email: login.email, password: login.password)
            }
            prepared.decision = StartSession(
                session: SessionStarted(session: login.session, user: user, expiresAt: login.expiresAt))
            prepared.actor = user.rawValue
            return .prepared(prepared)
        case .changePassword(let user, _, let currentPassword, _):
            var prepared = try await passwordWork.run { try command.prepare(media: media, hasher: hasher) }
            // A retry finds the password changed: it is answered from the first result before any check.
            if let idempotencyKey, let first = try firstResult(prepared, key: idempotencyKey) {
                return .answered(first)
            }
            let checked = try await passwordWork.run { try self.checkPassword(currentPassword, of: user) }
            if var change = prepared.decision as? ChangePassword {
                change.checkedHash = checked
                prepared.decision = change
            }
            return .prepared(prepared)
        case .deleteAccount(let user, let password):
            var prepared = try command.prepare(media: media, hasher: hasher)
            if let idempotencyKey, let first = try firstResult(prepared, key: idempotencyKey) {
                return .answered(first)
            }
            let checked = try await passwordWork.run { try self.checkPassword(password, of: user) }
            prepared.decision = DeleteAccount(user: user, checkedHash: checked)
            return .prepared(prepared)
        case .resetPassword:
            let prepared = try await passwordWork.run { try command.prepare(media: media, hasher: hasher) }
            if let idempotencyKey, let first = try firstResult(prepared, key: idempotencyKey) {
                return .answered(first)
            }
            return .prepared(prepared)
        default:
            return .prepared(try command.prepare(media: media, hasher: hasher))
        }
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
