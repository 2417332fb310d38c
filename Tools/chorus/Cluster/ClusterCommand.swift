import ArgumentParser
import ChorusCluster
import Foundation
import Logging

struct ClusterCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cluster",
        abstract: "Work on a cluster: its log in PostgreSQL, a replica of it in each node's data directory.",
        subcommands: [ClusterInitCommand.self, ClusterVerifyCommand.self]
    )
}

/// `--cluster URL`: the cluster's PostgreSQL; flag, then `CHORUS_CLUSTER_URL`.
struct ClusterOption: ParsableArguments {
    @Option(help: "The cluster's PostgreSQL, as postgresql://user[:password]@host:port/database (CHORUS_CLUSTER_URL).")
    var cluster: String?

    /// Runs `body` with the cluster's database, its pool running meanwhile.
    func withDatabase<R: Sendable>(_ body: (ClusterDatabase) async throws -> R) async throws -> R {
        guard let url = cluster ?? ProcessInfo.processInfo.environment["CHORUS_CLUSTER_URL"] else {
            throw ValidationError("give the cluster with --cluster or CHORUS_CLUSTER_URL")
        }
        let address: ClusterAddress
        do { address = try ClusterAddress(url) } catch let error as ClusterError {
            throw ValidationError("--cluster (or CHORUS_CLUSTER_URL): \(error.description)")
        }
        var logger = Logger(label: "chorus.cluster")
        logger.logLevel = .warning
        let database = ClusterDatabase(address: address, logger: logger)
        let pool = Task { await database.run() }
        defer { pool.cancel() }
        do {
            return try await body(database)
        } catch let error as OperatorError {
            throw error
        } catch let error as ClusterError {
            throw OperatorError(error.description)
        } catch let error as ValidationError {
            throw error
        } catch {
            throw OperatorError("the cluster at \(address): \(ClusterError.summary(error))")
        }
    }
}
