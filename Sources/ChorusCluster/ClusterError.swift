/// The cluster's database refused or could not take what was asked (unreachable, a lock held too long, a schema of
/// another version); nothing was committed unless the message says so.
public struct ClusterError: Error, Sendable, CustomStringConvertible {
    public let description: String

    public init(_ description: String) { self.description = description }
}
