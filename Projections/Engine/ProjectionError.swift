import ChorusLog

/// A failure of the projection engine.
public enum ProjectionError: Error, Sendable, CustomStringConvertible {
    /// The read models did not reach the position in time (the HTTP answer `503 not_caught_up`).
    case notCaughtUp(wanted: LogPosition, applied: LogPosition)
    /// The read models say they are past the end of the log: they were built from another log, or the log lost
    /// its end; rebuild them.
    case aheadOfLog(checkpoint: LogPosition, head: LogPosition)
    /// The read models were built with another layout of their tables, by another version of Chorus; rebuild them.
    case layoutChanged(found: UInt64, current: UInt64)
    /// The read models contradict themselves; rebuild them.
    case inconsistent(String)
    /// A page cursor that does not belong to the list it was given for (the HTTP answer `400 bad_request`).
    case badCursor

    public var description: String {
        switch self {
        case .notCaughtUp(let wanted, let applied):
            "the read models have applied position \(applied), not yet \(wanted)"
        case .aheadOfLog(let checkpoint, let head):
            "the read models are at position \(checkpoint) but the log ends at \(head); rebuild them"
        case .layoutChanged(let found, let current):
            "the read models have layout \(found), this version of Chorus reads layout \(current); rebuild them"
        case .inconsistent(let message):
            "the read models are inconsistent (\(message)); rebuild them"
        case .badCursor:
            "the cursor does not belong to this list"
        }
    }
}
