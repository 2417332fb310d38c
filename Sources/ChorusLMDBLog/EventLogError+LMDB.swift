import ChorusLog
import ChorusStorage

extension EventLogError {
    /// A failure of LMDB under the log; a closed environment is a closed log.
    static func storage(_ cause: LMDBError) -> EventLogError {
        if cause.code == .environmentClosed { return .closed }
        var error = EventLogError(.storage, cause.description)
        error.underlying = cause
        return error
    }
}
