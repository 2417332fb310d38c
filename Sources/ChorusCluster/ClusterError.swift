import PostgresNIO

/// The cluster's database refused or could not take what was asked (unreachable, a lock held too long, a schema of
/// another version); nothing was committed unless the message says so.
public struct ClusterError: Error, Sendable, CustomStringConvertible {
    public let description: String

    public init(_ description: String) { self.description = description }
}

extension ClusterError {
    /// An error in one line: PostgreSQL's own message when it sent one, else the client's account of it
    /// (PostgresNIO's plain description of a `PSQLError` hides everything; its reflection names the cause).
    public static func summary(_ error: any Error) -> String {
        let text = String(reflecting: error)
        if let range = text.range(of: "message: ") {
            return String(text[range.upperBound...].prefix { $0 != "," && $0 != ")" && $0 != "\n" })
        }
        if error is PSQLError { return String(text.prefix(300)) }
        return "\(error)"
    }
}
