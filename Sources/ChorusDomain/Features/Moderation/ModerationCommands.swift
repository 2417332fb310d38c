import ChorusLog

/// Reports a post, a comment or a user to the admins. The same reporter reporting the same thing again, while their
/// report of it is open, gets that report.
struct FileReport: Decision {
    /// Its target and the target's author are filled in by the decision.
    let report: ReportFiled
    let subject: ReportSubject

    static func prepare(reporter: UserID, subject: ReportSubject, reason: ReportReason, details: String?)
        throws(DomainError) -> PreparedCommand
    {
        let details = try Validate.optionalText(details, field: "details", limit: FieldLimits.comment)
        let report = ReportFiled(
            report: .make(), reporter: reporter, target: .user(reporter), targetAuthor: reporter, reason: reason,
            details: details)
        return PreparedCommand(
            caller: reporter.rawValue, tag: 22,
            fields: {
                switch subject {
                case .post(let post): $0.write("post \(post)")
                case .comment(let comment): $0.write("comment \(comment)")
                case .user(let user): $0.write("user \(user)")
                }
                $0.write(reason.rawValue)
                $0.write(details)
            }, decision: FileReport(report: report, subject: subject))
    }

    func decide(in context: DecisionContext) throws -> CommandResult {
        var report = self.report
        try context.requireUser(report.reporter)
        (report.target, report.targetAuthor) = try target(in: context)
        if let open = try context.state.openReport(by: report.reporter, of: report.target, in: context.transaction) {
            return context.unchanged(created: open.rawValue)
        }
        return try context.record(.reportFiled(report), created: report.report.rawValue)
    }

    /// What the subject names, and whom it is by.
    private func target(in context: DecisionContext) throws -> (ReportTarget, UserID) {
        let (state, transaction) = (context.state, context.transaction)
        switch subject {
        case .post(let post):
            guard let author = try state.author(of: post, in: transaction) else {
                throw DomainError(.unknownPost, "no post \(post)")
            }
            return (.post(post), author)
        case .comment(let comment):
            guard let found = try state.comment(comment, in: transaction), !found.deleted,
                try state.author(of: found.post, in: transaction) != nil
            else { throw DomainError(.invalidField, "commentId: no comment \(comment)") }
            return (.comment(found.post, comment), found.author)
        case .user(let user):
            try context.requireUser(user)
            return (.user(user), user)
        }
    }
}

/// An admin resolves a report: dismissed, its content deleted, or its content's author suspended. A report resolved
/// already changes nothing.
struct ResolveReport: Decision {
    let report: ReportID
    let action: ReportAction

    static func prepare(report: ReportID, action: ReportAction) -> PreparedCommand {
        PreparedCommand(
            caller: Command.adminActor, tag: 23,
            fields: {
                $0.write(report)
                $0.write(action.rawValue)
            }, decision: ResolveReport(report: report, action: action))
    }

    func decide(in context: DecisionContext) throws -> CommandResult {
        guard let open = try context.state.openReport(report, in: context.transaction) else {
            guard try context.state.isResolved(report, in: context.transaction) else {
                throw DomainError(.notFound, "no report \(report)")
            }
            return context.unchanged
        }
        let resolved = DomainEvent.reportResolved(ReportResolved(report: report, action: action, filedAt: open.filedAt))
        return try context.recordEach([resolved] + (try consequences(of: open, in: context)))
    }

    /// The events the action brings about, after the resolution.
    private func consequences(of open: DecisionState.OpenReport, in context: DecisionContext) throws -> [DomainEvent] {
        let (state, transaction) = (context.state, context.transaction)
        switch (action, open.target) {
        case (.dismiss, _):
            return []
        case (.removeContent, .post(let post)):
            guard let found = try state.post(post, in: transaction), !found.deleted else { return [] }
            return try state.deletions(of: post, found, in: transaction)
        case (.removeContent, .comment(let post, let comment)):
            guard let found = try state.comment(comment, in: transaction), !found.deleted,
                let postAuthor = try state.author(of: post, in: transaction)
            else { return [] }
            return [
                .commentDeleted(
                    CommentDeleted(
                        comment: comment, post: post, author: found.author, postAuthor: postAuthor,
                        commentedAt: found.commentedAt))
            ]
        case (.removeContent, .user):
            throw DomainError(.invalidField, "action: a reported user is dismissed or suspended, not removed")
        case (.suspendUser, _):
            return try Suspend.suspension(of: open.targetAuthor, in: context)
        }
    }
}

/// An admin suspends a user without a report (the console's "Suspend"). A suspended user's suspension changes nothing.
struct Suspend: Decision {
    let user: UserID

    static func prepare(user: UserID) -> PreparedCommand {
        PreparedCommand(caller: Command.adminActor, tag: 47, fields: { $0.write(user) }, decision: Suspend(user: user))
    }

    func decide(in context: DecisionContext) throws -> CommandResult {
        try context.requireUser(user)
        let events = try Self.suspension(of: user, in: context)
        return events.isEmpty ? context.unchanged : try context.recordEach(events)
    }

    /// What suspending `user` records: the suspension, and the end of each of their sessions; nothing when they are
    /// suspended already.
    static func suspension(of user: UserID, in context: DecisionContext) throws -> [DomainEvent] {
        let (state, transaction) = (context.state, context.transaction)
        guard try !state.isSuspended(user, in: transaction) else { return [] }
        let ended = try state.sessions(of: user, in: transaction).map {
            DomainEvent.sessionEnded(SessionEnded(session: $0, user: user))
        }
        return [.userSuspended(UserSuspended(user: user))] + ended
    }
}

/// An admin lifts a suspension.
struct Unsuspend: Decision {
    let user: UserID

    static func prepare(user: UserID) -> PreparedCommand {
        PreparedCommand(
            caller: Command.adminActor, tag: 24, fields: { $0.write(user) }, decision: Unsuspend(user: user))
    }

    func decide(in context: DecisionContext) throws -> CommandResult {
        try context.requireUser(user)
        guard try context.state.isSuspended(user, in: context.transaction) else { return context.unchanged }
        return try context.record(.userUnsuspended(UserUnsuspended(user: user)))
    }
}
