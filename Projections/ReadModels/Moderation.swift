import ChorusDomain
import ChorusLog
import ChorusStorage

/// The admins' report queue, and who is suspended (whose content every query hides as if deleted).
struct Moderation: ReadModel {
    /// state (0 open, 1 resolved), NUL, position of the report → ``ReportRecord``
    static let reports: StoreTableDefinition = "reports"
    /// report → its position
    static let reportPositions: StoreTableDefinition = "report-positions"
    /// user → position of the suspension
    static let suspended: StoreTableDefinition = "suspended"
    static let tables = [reports, reportPositions, suspended]

    let reports: StoreTable
    let reportPositions: StoreTable
    let suspended: StoreTable

    init(store: KeyValueStore) {
        reports = store.table(Self.reports)
        reportPositions = store.table(Self.reportPositions)
        suspended = store.table(Self.suspended)
    }

    static func key(resolved: Bool, _ position: LogPosition) -> [UInt8] {
        [resolved ? 1 : 0, 0] + ProjectionKey.position(position)
    }

    func apply(_ event: DomainEvent, at envelope: EventEnvelope, in transaction: StoreTransaction) throws {
        switch event {
        case .reportFiled(let event):
            let record = ReportRecord(
                id: event.report, reporter: event.reporter, target: event.target, reason: event.reason,
                details: event.details, createdAt: envelope.recordedAt, resolution: nil)
            try transaction.put(record.encoded(), for: Self.key(resolved: false, envelope.position), in: reports)
            try transaction.put(
                PositionValue.encode(envelope.position), for: ProjectionKey(event.report).bytes, in: reportPositions)
        case .reportResolved(let event):
            let open = Self.key(resolved: false, event.filedAt)
            guard var record = try transaction.value(for: open, in: reports).map(ReportRecord.init(decoding:)) else {
                throw ProjectionError.inconsistent("report \(event.report) was resolved but is not open")
            }
            record.resolution = event.action
            try transaction.delete(open, in: reports)
            try transaction.put(record.encoded(), for: Self.key(resolved: true, event.filedAt), in: reports)
        case .userSuspended(let event):
            try transaction.put(
                PositionValue.encode(envelope.position), for: ProjectionKey(event.user).bytes, in: suspended)
        case .userUnsuspended(let event):
            try transaction.delete(ProjectionKey(event.user).bytes, in: suspended)
        default:
            break
        }
    }
}

/// A report as the queue keeps it.
struct ReportRecord: Hashable {
    var id: ReportID
    var reporter: UserID
    var target: ReportTarget
    var reason: ReportReason
    var details: String
    var createdAt: EventTime
    var resolution: ReportAction?

    func encoded() -> [UInt8] {
        var writer = PayloadWriter()
        writer.write(id)
        writer.write(reporter)
        writer.write(target)
        writer.write(reason.rawValue)
        writer.write(details)
        writer.write(createdAt.millisecondsSince1970)
        writer.write(resolution?.rawValue)
        return writer.bytes
    }

    init(
        id: ReportID, reporter: UserID, target: ReportTarget, reason: ReportReason, details: String,
        createdAt: EventTime, resolution: ReportAction?
    ) {
        self.id = id
        self.reporter = reporter
        self.target = target
        self.reason = reason
        self.details = details
        self.createdAt = createdAt
        self.resolution = resolution
    }

    init(decoding bytes: [UInt8]) throws {
        var reader = PayloadReader(bytes)
        id = try reader.read(ReportID.self)
        reporter = try reader.read(UserID.self)
        target = try reader.readReportTarget()
        reason = ReportReason(rawValue: try reader.readString()) ?? .other
        details = try reader.readString()
        createdAt = EventTime(millisecondsSince1970: try reader.readInt64())
        resolution = try reader.readOptionalString().flatMap(ReportAction.init(rawValue:))
        try reader.finish()
    }
}

/// A report as the admins' queue shows it.
public struct Report: Sendable, Hashable {
    public let id: ReportID
    public let reporter: UserSummary
    public let target: ReportTarget
    public let reason: ReportReason
    public let details: String
    public let createdAt: EventTime
    public let resolution: ReportAction?
}

extension ReadView {
    /// Open or resolved reports, newest first.
    public func reports(resolved: Bool, page: PageRequest) throws -> Page<Report> {
        try transaction.page(
            models.moderation.reports, prefix: [resolved ? 1 : 0, 0], order: .newestFirst, request: page
        ) { _, value in
            let record = try ReportRecord(decoding: Array(value))
            return Report(
                id: record.id, reporter: try requireSummary(record.reporter), target: record.target,
                reason: record.reason, details: record.details, createdAt: record.createdAt,
                resolution: record.resolution)
        }
    }

    /// One report, open or resolved; nil if there is no such report.
    public func report(_ id: ReportID) throws -> Report? {
        guard
            let position = try transaction.position(
                under: ProjectionKey(id).bytes, in: models.moderation.reportPositions)
        else { return nil }
        for resolved in [false, true] {
            let key = Moderation.key(resolved: resolved, position)
            if let value = try transaction.value(for: key, in: models.moderation.reports) {
                let record = try ReportRecord(decoding: value)
                return Report(
                    id: record.id, reporter: try requireSummary(record.reporter), target: record.target,
                    reason: record.reason, details: record.details, createdAt: record.createdAt,
                    resolution: record.resolution)
            }
        }
        return nil
    }

    /// A post as its author sees it, whoever that is (suspended, or a private account): for admins reviewing a report.
    /// Nil when it was deleted, or never was.
    public func postForReview(_ post: PostID) throws -> Post? {
        guard let author = try postRecord(post)?.author else { return nil }
        return try self.post(post, viewer: author)
    }

    /// The ids of every suspended user, read once per view (there are few).
    func suspendedIDs() throws -> [[UInt8]] {
        if let known = relationMemo.suspended { return known }
        var found: [[UInt8]] = []
        try transaction.scan(models.moderation.suspended) { key, _ in
            found.append(Array(key))
            return true
        }
        relationMemo.suspended = found
        return found
    }

    /// Whether `user` is suspended.
    public func isSuspended(_ user: UserID) throws -> Bool {
        try suspendedIDs().contains { $0.elementsEqual(user.rawValue.utf8) }
    }
}
