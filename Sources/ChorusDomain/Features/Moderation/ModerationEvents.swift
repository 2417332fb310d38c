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

extension ReportFiled: StoredEvent {
    static let typeName = "ReportFiled"
    static let schemaVersion: UInt16 = 1
    var stream: StreamID { .report(report) }
    var domainEvent: DomainEvent { .reportFiled(self) }

    func encode(to payload: inout PayloadWriter, keys: any PersonalDataKeys) throws {
        payload.write(report)
        payload.write(reporter)
        payload.write(target)
        payload.write(targetAuthor)
        payload.write(reason.rawValue)
        payload.write(details)
    }

    init(from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys) throws {
        let report = try payload.read(ReportID.self)
        let reporter = try payload.read(UserID.self)
        let target = try payload.readReportTarget()
        let author = try payload.read(UserID.self)
        guard let reason = ReportReason(rawValue: try payload.readString()) else { throw PayloadError.badFlag(0) }
        self.init(
            report: report, reporter: reporter, target: target, targetAuthor: author, reason: reason,
            details: try payload.readString())
    }

    func changeState(_ state: DecisionState, at position: LogPosition, in changes: inout DecisionState.ChangeList) {
        let open = DecisionState.OpenReport(filedAt: position, target: target, targetAuthor: targetAuthor)
        changes.put(state.reports, .init(report.rawValue), open.encoded())
        changes.put(
            state.reportSubjects, .init(reporter.rawValue, DecisionState.reportSubjectKey(target)),
            text: report.rawValue)
    }
}

extension ReportResolved: StoredEvent {
    static let typeName = "ReportResolved"
    static let schemaVersion: UInt16 = 1
    var stream: StreamID { .report(report) }
    var domainEvent: DomainEvent { .reportResolved(self) }

    func encode(to payload: inout PayloadWriter, keys: any PersonalDataKeys) throws {
        payload.write(report)
        payload.write(action.rawValue)
        payload.write(filedAt.rawValue)
    }

    init(from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys) throws {
        let report = try payload.read(ReportID.self)
        guard let action = ReportAction(rawValue: try payload.readString()) else { throw PayloadError.badFlag(0) }
        self.init(report: report, action: action, filedAt: LogPosition(try payload.readUInt64()))
    }

    func changeState(_ state: DecisionState, at position: LogPosition, in changes: inout DecisionState.ChangeList) {
        changes.remove(state.reports, .init(report.rawValue))
        changes.put(state.resolvedReports, .init(report.rawValue), [])
    }
}

extension UserSuspended: StoredEvent {
    static let typeName = "UserSuspended"
    static let schemaVersion: UInt16 = 1
    var stream: StreamID { .user(user) }
    var domainEvent: DomainEvent { .userSuspended(self) }

    func encode(to payload: inout PayloadWriter, keys: any PersonalDataKeys) throws { payload.write(user) }

    init(from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys) throws {
        self.init(user: try payload.read(UserID.self))
    }

    func changeState(_ state: DecisionState, at position: LogPosition, in changes: inout DecisionState.ChangeList) {
        changes.put(state.suspended, .init(user.rawValue), [])
    }
}

extension UserUnsuspended: StoredEvent {
    static let typeName = "UserUnsuspended"
    static let schemaVersion: UInt16 = 1
    var stream: StreamID { .user(user) }
    var domainEvent: DomainEvent { .userUnsuspended(self) }

    func encode(to payload: inout PayloadWriter, keys: any PersonalDataKeys) throws { payload.write(user) }

    init(from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys) throws {
        self.init(user: try payload.read(UserID.self))
    }

    func changeState(_ state: DecisionState, at position: LogPosition, in changes: inout DecisionState.ChangeList) {
        changes.remove(state.suspended, .init(user.rawValue))
    }
}

extension PayloadWriter {
    /// A report's target: a kind byte (1 post, 2 comment, 3 user), then its ids.
    public mutating func write(_ target: ReportTarget) {
        switch target {
        case .post(let post):
            write(UInt8(1))
            write(post)
        case .comment(let post, let comment):
            write(UInt8(2))
            write(post)
            write(comment)
        case .user(let user):
            write(UInt8(3))
            write(user)
        }
    }
}

extension PayloadReader {
    /// A report's target as ``PayloadWriter/write(_:)-(ReportTarget)`` wrote it.
    public mutating func readReportTarget() throws -> ReportTarget {
        switch try readByte() {
        case 1: .post(try read(PostID.self))
        case 2: .comment(try read(PostID.self), try read(CommentID.self))
        case 3: .user(try read(UserID.self))
        case let flag: throw PayloadError.badFlag(flag)
        }
    }
}
