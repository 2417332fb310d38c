import ArgumentParser
import ChorusBackend
import ChorusCluster
import ChorusLog
import Foundation

struct ClusterVerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check that a node's log is the cluster's: the same records at the same positions.",
        discussion: """
            Compares every event of the data directory's log with the cluster's, byte for byte, through the \
            replica's head (a node may be behind the cluster, never different from it), and reports how far behind \
            it is. Reads only, so it may run beside the node's server; `chorus log verify` checks the log itself. \
            Exits 1 at the first difference, naming its position.
            """
    )

    @OptionGroup var data: DataDirectoryOption
    @OptionGroup var cluster: ClusterOption
    @OptionGroup var output: JSONOutputOption

    mutating func run() async throws {
        let directory = try data.existing()
        let log = try directory.openLog(readOnly: true, replica: true)
        defer { log.close() }
        let head = log.head.rawValue
        let output = self.output
        try await cluster.withDatabase { database in
            let clusterHead = try await database.head()
            var next: UInt64 = 1
            while next <= head {
                let through = min(head, next + 8_191)
                let theirs = try await database.records(from: next, through: through)
                let ours = try log.read(from: LogPosition(next), limit: Int(through - next + 1))
                for (offset, event) in ours.enumerated() {
                    let position = next + UInt64(offset)
                    guard offset < theirs.count else {
                        Self.fail(output, position, "the cluster holds no event here; the node does")
                    }
                    guard event.record == theirs[offset] else {
                        Self.fail(output, position, "the node's event differs from the cluster's")
                    }
                }
                next = through + 1
            }
            output.emit(
                "node's log is the cluster's through position \(head) (the cluster is at \(clusterHead.position), "
                    + "commit \(clusterHead.commit))",
                [
                    "same": true, "head": head, "clusterHead": clusterHead.position,
                    "clusterCommit": clusterHead.commit,
                ])
        }
    }

    private static func fail(_ output: JSONOutputOption, _ position: UInt64, _ message: String) -> Never {
        output.emit(
            "node's log is NOT the cluster's: position \(position): \(message)",
            ["same": false, "position": position, "problem": message])
        Self.exit(withError: ExitCode(1))
    }
}
