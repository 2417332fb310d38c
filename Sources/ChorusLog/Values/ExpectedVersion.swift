/// What an append expects of its stream's current version; a mismatch is
/// ``EventLogError/Code/wrongExpectedVersion`` and appends nothing.
public enum ExpectedVersion: Hashable, Sendable, CustomStringConvertible {
    /// Append whatever the stream's version.
    case any
    /// The stream must have no events yet.
    case noStream
    /// The stream's last event must have exactly this version (0 means no events).
    case exact(UInt64)

    /// Whether a stream at `currentVersion` meets this expectation.
    public func admits(_ currentVersion: UInt64) -> Bool {
        switch self {
        case .any: true
        case .noStream: currentVersion == 0
        case .exact(let version): currentVersion == version
        }
    }

    public var description: String {
        switch self {
        case .any: "any"
        case .noStream: "no stream"
        case .exact(let version): "version \(version)"
        }
    }
}
