import ChorusLog

/// What a report is about.
public enum ReportTarget: Sendable, Hashable {
    case post(PostID)
    case comment(PostID, CommentID)
    case user(UserID)
}

/// Why content is reported.
public enum ReportReason: String, Sendable, Hashable, CaseIterable {
    case spam, abuse, nudity, other
}

/// A user reported a post, a comment or a user to the admins. `targetAuthor`: whom the target is by (the user of a
/// user report), a fact of the decision, so that a suspension needs no look-up.
public struct ReportFiled: Sendable, Hashable {
    public var report: ReportID
    public var reporter: UserID
    public var target: ReportTarget
    public var targetAuthor: UserID
    public var reason: ReportReason
    public var details: String
    public init(
        report: ReportID, reporter: UserID, target: ReportTarget, targetAuthor: UserID, reason: ReportReason,
        details: String
    ) {
        self.report = report
        self.reporter = reporter
        self.target = target
        self.targetAuthor = targetAuthor
        self.reason = reason
        self.details = details
    }
}

/// How an admin resolved a report.
public enum ReportAction: String, Sendable, Hashable, CaseIterable {
    case dismiss
    case removeContent = "remove_content"
    case suspendUser = "suspend_user"
}

/// An admin resolved a report; what the action did are events of the same command (``PostDeleted``,
/// ``CommentDeleted``, ``UserSuspended``). `filedAt`: the position of the ``ReportFiled``.
public struct ReportResolved: Sendable, Hashable {
    public var report: ReportID
    public var action: ReportAction
    public var filedAt: LogPosition
    public init(report: ReportID, action: ReportAction, filedAt: LogPosition) {
        self.report = report
        self.action = action
        self.filedAt = filedAt
    }
}

/// An admin suspended a user: their sessions end (``SessionEnded`` events of the same command), they cannot sign in,
/// and what they wrote is hidden as if deleted, until ``UserUnsuspended``.
public struct UserSuspended: Sendable, Hashable {
    public var user: UserID
    public init(user: UserID) { self.user = user }
}

public struct UserUnsuspended: Sendable, Hashable {
    public var user: UserID
    public init(user: UserID) { self.user = user }
}
