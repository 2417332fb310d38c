/// One commit a node made to the cluster: how often it had to be decided again because another node's commit came
/// first (the cost of several nodes writing at once), and how long it took.
public struct ClusterCommitReport: Sendable {
    /// How many times the appends were decided: 1, plus one for every other node's commit that came first.
    public let attempts: Int
    /// From the first decision until the node's replica held the commit.
    public let duration: Duration
}
