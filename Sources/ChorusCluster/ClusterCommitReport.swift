/// One commit a node made to the cluster: what it carried, and how often it had to be decided again because another
/// node's commit came first (the cost of several nodes writing at once).
public struct ClusterCommitReport: Sendable {
    /// The appends (and decisions) it answered.
    public let appends: Int
    /// The events it appended.
    public let events: Int
    /// How many times the appends were decided: 1, plus one for every other node's commit that came first.
    public let attempts: Int
    /// From the first decision until the node's replica held the commit.
    public let duration: Duration
}
