import ChorusCluster
import ChorusFixtures
import ChorusProcesses
import ChorusTestSupport
import Foundation
import Synchronization
import Testing

/// A cluster for a test: a throwaway PostgreSQL and `chorus serve --cluster` nodes on data directories of their own,
/// each a process on a port of its own; everything stopped and removed at the end.
final class ClusterFixture: Sendable {
    let postgres: LocalPostgresServer
    let directory: String
    private let nodes: Mutex<[ServerProcess]>
    /// How long a write waits for the head row before its 503.
    let writeTimeout: String
    /// More options for every node.
    let extraArguments: [String]
    /// More variables for every node.
    let environment: [String: String]

    private init(
        postgres: LocalPostgresServer, directory: String, writeTimeout: String, extraArguments: [String],
        environment: [String: String]
    ) {
        self.postgres = postgres
        self.directory = directory
        self.writeTimeout = writeTimeout
        self.extraArguments = extraArguments
        self.environment = environment
        nodes = Mutex([])
    }

    /// Runs `body` with `count` nodes started (A, B, C, … are nodes 0, 1, 2, …).
    static func run(
        nodes count: Int = 3, writeTimeout: String = "5s", extraArguments: [String] = [],
        environment: [String: String] = [:], in given: String? = nil, _ body: (ClusterFixture) async throws -> Void
    ) async throws {
        try await withDirectory(given) { directory in
            // initdb and pg_ctl take seconds: waited for on a thread of their own, not one of the test process's.
            let postgres = try await BlockingWork.run { try LocalPostgresServer(port: LoopbackPort.free()) }
            let cluster = ClusterFixture(
                postgres: postgres, directory: directory, writeTimeout: writeTimeout, extraArguments: extraArguments,
                environment: environment)
            let outcome: Result<Void, any Error>
            do {
                for index in 0..<count { try await cluster.start(index) }
                try await body(cluster)
                outcome = .success(())
            } catch {
                outcome = .failure(error)
            }
            await cluster.stopAll()
            _ = try? await BlockingWork.run { postgres.stop() }
            try outcome.get()
        }
    }

    func data(_ index: Int) -> String { directory + "/node-\(index)" }

    func node(_ index: Int) -> ServerProcess { nodes.withLock { $0[index] } }

    var count: Int { nodes.withLock { $0.count } }

    /// Starts node `index` (again, on its old port, if it ran before).
    @discardableResult
    func start(_ index: Int) async throws -> ServerProcess {
        let port = nodes.withLock { index < $0.count ? $0[index].port : nil }
        let server = try await ServerProcess(
            data: data(index), port: port,
            extraArguments: ["--cluster", postgres.url, "--no-rate-limits", "--cluster-write-timeout", writeTimeout]
                + extraArguments, environment: environment)
        nodes.withLock { nodes in
            if index < nodes.count { nodes[index] = server } else { nodes.append(server) }
        }
        return server
    }

    /// Kills node `index` outright (SIGKILL).
    func kill(_ index: Int) async {
        let server = node(index)
        server.kill()
        _ = await server.exited()
    }

    /// Stops every node still running (SIGTERM); each must exit cleanly.
    func stopAll() async {
        for server in nodes.withLock({ $0 }) where server.process.isRunning {
            let status = await server.stop()
            #expect(status == 0, "a node exited with \(status): \(server.standardError().suffix(2000))")
        }
    }

    /// The cluster's last position, from PostgreSQL.
    func clusterHead() throws -> UInt64 {
        let text = try postgres.psql("SELECT position FROM chorus_head").trimmingCharacters(in: .whitespacesAndNewlines)
        guard let head = UInt64(text) else { throw ServerError("chorus_head answered \(text)") }
        return head
    }

    /// Waits (at most 30 s) until every running node's log and read models are at the cluster's head.
    func waitUntilCaughtUp() async throws {
        let head = try clusterHead()
        for index in 0..<count where node(index).process.isRunning {
            var health: [String: Any] = [:]
            try await eventually(
                "node \(index) at the cluster's head \(head), not at \(health)", every: .milliseconds(100)
            ) {
                health = try await node(index).call("GET", "/health", token: node(index).adminToken).json
                let readModels = (health["projections"] as? [String: Any])?["readModels"] as? Int
                return health["position"] as? Int == Int(head) && readModels == Int(head)
            }
        }
    }
}

/// `body` in `given`, or in a temporary directory of its own removed after.
private func withDirectory(_ given: String?, _ body: (String) async throws -> Void) async throws {
    guard let given else { return try await withTemporaryDirectory(body) }
    try await body(given)
}

extension ServerProcess {
    /// Signs up a new user here: their id and token.
    func register(_ name: String) async throws -> (id: String, token: String, email: String) {
        let email = "\(name.lowercased())-\(UUID().uuidString.prefix(8))@example.com"
        let answer = try await call(
            "POST", "/v1/auth/register", json: ["email": email, "password": "password1", "name": name])
        guard answer.status == 201, let token = answer.json["token"] as? String,
            let id = (answer.json["user"] as? [String: Any])?["id"] as? String
        else { throw ServerError("register answered \(answer.status): \(answer.json)") }
        return (id, token, email)
    }
}
