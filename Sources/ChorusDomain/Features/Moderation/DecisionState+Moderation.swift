import ChorusLog

/// What the decisions of reports and suspensions read in the state.
extension DecisionState {
    /// The report while it is open; nil once resolved, or if there is no such report.
    func openReport(_ report: ReportID, in state: some StateReader) throws -> OpenReport? {
        try state.withValue(for: Self.key(report.rawValue), in: reports) { try $0.map(OpenReport.init(decoding:)) }
    }

    func isResolved(_ report: ReportID, in state: some StateReader) throws -> Bool {
        try state.withValue(for: Self.key(report.rawValue), in: resolvedReports) { $0 != nil }
    }

    /// `reporter`'s report of `target` while it is open; nil when they have none open.
    func openReport(by reporter: UserID, of target: ReportTarget, in state: some StateReader) throws -> ReportID? {
        let key = Self.key(reporter.rawValue, Self.reportSubjectKey(target))
        guard
            let latest = try state.value(for: key, in: reportSubjects).map({
                ReportID(unchecked: String(decoding: $0, as: UTF8.self))
            }), try openReport(latest, in: state) != nil
        else { return nil }
        return latest
    }

    /// What a report is about, as a key: `post <id>`, `comment <id>` or `user <id>`.
    static func reportSubjectKey(_ target: ReportTarget) -> String {
        switch target {
        case .post(let post): "post \(post)"
        case .comment(_, let comment): "comment \(comment)"
        case .user(let user): "user \(user)"
        }
    }

    func isSuspended(_ user: UserID, in state: some StateReader) throws -> Bool {
        try state.withValue(for: Self.key(user.rawValue), in: suspended) { $0 != nil }
    }
}
