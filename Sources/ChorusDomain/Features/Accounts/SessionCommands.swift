import ChorusLog

/// A login before its password is checked: the executor checks it outside the writer, then decides a
/// ``StartSession`` for the user it found.
struct LogIn: Decision {
    let email: String
    let password: String
    let session: SessionID
    let expiresAt: EventTime

    static func prepare(email: String, password: String, _ context: CommandPreparation) -> PreparedCommand {
        let email = normalized(email)
        return PreparedCommand(
            caller: Validate.accountKey(forEmail: email), actor: "", tag: 10, fields: { $0.write(email) },
            decision: LogIn(email: email, password: password, session: .make(), expiresAt: context.sessionEnd))
    }

    func decide(in context: DecisionContext) throws -> CommandResult {
        preconditionFailure("the executor turns a login into StartSession once the password is checked")
    }
}

struct StartSession: Decision {
    let session: SessionStarted

    func decide(in context: DecisionContext) throws -> CommandResult {
        try context.requireUser(session.user)
        guard try !context.state.isSuspended(session.user, in: context.transaction) else {
            throw DomainError(.suspended, "this account is suspended")
        }
        return try context.record(.sessionStarted(session), session: session)
    }
}

/// Ends one of the user's sessions; ending one that has ended changes nothing.
struct LogOut: Decision {
    let user: UserID
    let session: SessionID
    /// The device the user logs out with, which gets no more pushes; one that is not theirs is left alone.
    let device: DeviceID?

    static func prepare(user: UserID, session: SessionID, device: DeviceID?) -> PreparedCommand {
        PreparedCommand(
            caller: user.rawValue, tag: 11,
            fields: {
                $0.write(session)
                if let device { $0.write(device) }
            },
            decision: LogOut(user: user, session: session, device: device))
    }

    func decide(in context: DecisionContext) throws -> CommandResult {
        var events: [DomainEvent] = []
        if try context.state.session(session, in: context.transaction)?.user == user {
            events.append(.sessionEnded(SessionEnded(session: session, user: user)))
        }
        if let device, let tokenKey = try context.state.tokenKey(of: device, of: user, in: context.transaction) {
            events.append(
                .deviceForgotten(DeviceForgotten(user: user, device: device, tokenKey: tokenKey, reason: .byUser)))
        }
        guard !events.isEmpty else { return context.unchanged }
        return try context.record(events)
    }
}

struct ChangePassword: Decision {
    let user: UserID
    /// The session asking, which goes on.
    let keep: SessionID
    let newHash: String
    /// The stored hash the current password was checked against, outside the writer (filled in by the executor).
    var checkedHash = ""

    static func prepare(user: UserID, keeping session: SessionID, newPassword: String, _ context: CommandPreparation)
        throws(DomainError) -> PreparedCommand
    {
        try Validate.password(newPassword)
        return PreparedCommand(
            caller: user.rawValue, tag: 15, fields: { $0.write(session) },
            decision: ChangePassword(user: user, keep: session, newHash: context.hasher.hash(newPassword)))
    }

    func decide(in context: DecisionContext) throws -> CommandResult {
        // A change that came in after the check makes it stale.
        guard try context.state.passwordHash(of: user, in: context.transaction) == checkedHash else {
            throw DomainError(.wrongPassword, "the password changed meanwhile")
        }
        return try context.changePassword(of: user, to: newHash, keeping: keep)
    }
}

/// Opens a password reset for the account with this e-mail, if there is one.
struct RequestPasswordReset: Decision {
    let emailKey: String
    /// Its user is found in the decision; until then, the request names an e-mail only.
    let reset: PasswordResetRequested

    static func prepare(email: String, _ context: CommandPreparation) -> PreparedCommand {
        let email = normalized(email)
        let reset = PasswordResetRequested(
            user: UserID(unchecked: ""), reset: .make(), expiresAt: context.now.adding(PasswordResetRequested.lifetime))
        let account = Validate.accountKey(forEmail: email)
        return PreparedCommand(
            caller: account, actor: "", tag: 16, fields: { $0.write(email) },
            decision: RequestPasswordReset(emailKey: account, reset: reset))
    }

    func decide(in context: DecisionContext) throws -> CommandResult {
        // One event either way: a request for an e-mail no account has moves the log's head as one that found an
        // account does.
        guard let user = try context.state.user(withEmailKey: emailKey, in: context.transaction) else {
            return try context.record(.passwordResetUnmatched(PasswordResetUnmatched()))
        }
        var reset = self.reset
        reset.user = user
        return try context.record(.passwordResetRequested(reset))
    }
}

struct ResetPassword: Decision {
    let user: UserID
    let reset: ResetID
    let newHash: String

    static func prepare(user: UserID, reset: ResetID, newPassword: String, _ context: CommandPreparation)
        throws(DomainError) -> PreparedCommand
    {
        try Validate.password(newPassword)
        return PreparedCommand(
            caller: user.rawValue, tag: 17, fields: { $0.write(reset) },
            decision: ResetPassword(user: user, reset: reset, newHash: context.hasher.hash(newPassword)))
    }

    func decide(in context: DecisionContext) throws -> CommandResult {
        guard let expiresAt = try context.state.reset(reset, of: user, in: context.transaction),
            context.batch.recordedAt < expiresAt
        else { throw DomainError(.invalidToken, "the reset token is unknown, used or expired") }
        try context.requireUser(user)
        return try context.changePassword(of: user, to: newHash, keeping: nil)
    }
}

extension DecisionContext {
    /// Records the new password, revokes the open resets and ends every session but `keep`.
    fileprivate func changePassword(of user: UserID, to hash: String, keeping keep: SessionID?) throws
        -> CommandResult
    {
        let change = PasswordChanged(
            user: user, passwordHash: hash, revokedResets: try state.resets(of: user, in: transaction))
        let ended = try state.sessions(of: user, in: transaction).filter { $0 != keep }
        return try record(
            [.passwordChanged(change)] + ended.map { .sessionEnded(SessionEnded(session: $0, user: user)) })
    }
}
