import ArgumentParser
import ChorusBackend
import ChorusCluster
import ChorusDomain
import ChorusLog
import Foundation

struct ClusterInitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Move a single node's log into an empty cluster, with its positions, decision state and keys.",
        discussion: """
            Copies every event of the data directory's log to the cluster at its own position, the decision state \
            (taken e-mails, follows, likes, idempotency records, …) whole, every user's data key and the session \
            secret, in one PostgreSQL transaction: if anything fails, the cluster stays empty. The data directory \
            is then a replica of the cluster: serve it with --cluster as the first node, and start more nodes on \
            empty data directories, which fill from the cluster. Stop the server of the data directory first. \
            Refuses a cluster that already holds a log.
            """
    )

    @Option(help: "The data directory whose log moves into the cluster.")
    var from: String

    @OptionGroup var cluster: ClusterOption
    @OptionGroup var output: JSONOutputOption

    mutating func run() async throws {
        let directory = DataDirectory(from)
        guard FileManager.default.fileExists(atPath: directory.log + "/data.mdb") else {
            throw OperatorError("no event log in \(directory.log): give --from a Chorus data directory")
        }
        let log = try directory.openLog(replica: true)
        defer { log.close() }
        let keys = try directory.openKeys()
        defer { keys.close() }
        let allKeys = try keys.allKeys()
        let secret = try directory.sessionSecretBytes()
        let progress = WorkProgress("copying the log into the cluster", total: Int(log.head.rawValue), unit: "events")
        let started = ContinuousClock.now
        let summary = try await cluster.withDatabase { database in
            try await log.withWriter {
                try await ClusterSeed.seed(
                    database, from: log, stateTables: DecisionState.tableNames, keys: allKeys, sessionSecret: secret,
                    progress: { progress.update(Int($0)) })
            }
        }
        progress.finish()
        let seconds =
            Double((ContinuousClock.now - started).components.attoseconds) / 1e18
            + Double((ContinuousClock.now - started).components.seconds)
        output.emit(
            "cluster initialised from \(directory.root): \(summary.events) events, \(summary.stateEntries) "
                + "decision-state entries, \(summary.keys) data keys, in \(String(format: "%.1f", seconds)) s; "
                + "serve \(directory.root) with --cluster as its first node",
            [
                "events": summary.events, "stateEntries": summary.stateEntries, "keys": summary.keys,
                "seconds": seconds,
            ])
    }
}
