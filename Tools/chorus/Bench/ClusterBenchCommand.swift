import ArgumentParser
import ChorusCluster
import ChorusFixtures
import ChorusProcesses
import Foundation
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

struct ClusterBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cluster",
        abstract: "Three `chorus serve --cluster` nodes on one PostgreSQL on this machine, against one embedded node.",
        discussion: """
            Starts a throwaway PostgreSQL (Debian's postgresql; initdb in the work directory, loopback only), then \
            measures, in the same run: appends/s of --writers connections posting over three wrk processes to one \
            embedded `chorus serve`, then the same spread over --nodes `chorus serve --cluster` nodes (the ratio of \
            the two is the figure to compare across machines), with the cluster's commits/s, events per commit and \
            how often a commit had to be decided again because another node's came first; then, one at a time, a \
            post written on one node and read on the next with Chorus-Min-Position (the read's latency is what \
            replication adds), and a message sent on one node and delivered on another node's live stream. Every \
            process shares this machine's cores: the figures bound what one box does, not what a cluster of boxes \
            does.
            """
    )

    @OptionGroup var output: BenchOutputOptions

    @Option(help: "Seconds each write run lasts.")
    var seconds = 10

    @Option(help: "Open connections writing at once, spread over the nodes.")
    var writers = 64

    @Option(help: "Writes read back on another node, and messages timed to another node's live stream.")
    var probes = 300

    @Option(help: "Cluster nodes (with one, the cross-node figures are left out).")
    var nodes = 3

    @Option(help: "How many of the nodes take the writes (by default all); the others only follow the cluster.")
    var writingNodes: Int?

    /// Three wrk processes, each with one thread, in both runs (over the nodes in turn), so that the runs differ only in
    /// what serves them.
    private static let drivers = 3

    mutating func run() async throws {
        #if DEBUG
        printProgress("warning: this is a debug build; benchmark with `swift run -c release chorus bench cluster`")
        #endif
        guard seconds > 0, writers >= Self.drivers, probes > 0, nodes >= 1, (1...nodes).contains(writingNodes ?? nodes)
        else {
            throw ValidationError(
                "--seconds, --probes and --nodes must be positive, --writers at least \(Self.drivers), "
                    + "--writing-nodes between 1 and --nodes")
        }
        let wrk = try Wrk.locateOrInstall()
        let workDirectory = try BenchWorkDirectory(parent: output.workDirectory)
        defer { workDirectory.remove() }
        printProgress("working in \(workDirectory.path); starting PostgreSQL")
        let postgres = try LocalPostgresServer(port: try LoopbackPort.free())
        defer { postgres.stop() }

        var report = BenchmarkReport(suite: "cluster")
        report.add("writers", Double(writers))
        report.add("nodes", Double(nodes))
        report.add("writing_nodes", Double(writingNodes ?? nodes))

        printProgress("one embedded node: \(writers) writers for \(seconds) s")
        let single = try await BenchServer(data: workDirectory.path + "/single", arguments: ["--no-rate-limits"])
        let singleLanes = try await writerLanes(on: [single])
        let singleCPU = ProcessCPU.seconds(of: single.processIdentifier)
        let singleRate = try await appendRate(lanes: singleLanes, wrk)
        report.add("single_node_appends_per_s", singleRate)
        report.add(
            "single_node_cpu_ms_per_append",
            (ProcessCPU.seconds(of: single.processIdentifier) - singleCPU) * 1000 / (singleRate * Double(seconds)))
        single.stop()

        printProgress(
            "\(nodes) cluster nodes: \(writers) writers spread over \(writingNodes ?? nodes) of them for \(seconds) s")
        var cluster: [BenchServer] = []
        defer { for node in cluster { node.stop() } }
        for index in 0..<nodes {
            cluster.append(
                try await BenchServer(
                    data: workDirectory.path + "/node-\(index)",
                    arguments: ["--cluster", postgres.url, "--no-rate-limits"]))
        }
        let lanes = try await writerLanes(on: Array(cluster.prefix(writingNodes ?? nodes)))
        let nodesCPU = { cluster.reduce(0) { $0 + ProcessCPU.seconds(of: $1.processIdentifier) } }
        let (nodesBefore, postgresBefore) = (nodesCPU(), ProcessCPU.seconds(ofProcessesNamed: "postgres"))
        let before = try await ClusterCommitCounts(of: cluster)
        let clusterRate = try await appendRate(lanes: lanes, wrk)
        let made = try await ClusterCommitCounts(of: cluster) - before
        let appended = clusterRate * Double(seconds)
        report.add("cluster_appends_per_s", clusterRate)
        report.add("cluster_to_single_node_ratio", clusterRate / singleRate)
        report.add("cluster_commits_per_s", made.commits / Double(seconds))
        report.add("cluster_appends_per_commit", appended / max(made.commits, 1))
        report.add("cluster_repeated_decisions_per_commit", made.repeatedDecisions / max(made.commits, 1))
        report.add("cluster_nodes_cpu_ms_per_append", (nodesCPU() - nodesBefore) * 1000 / appended)
        report.add(
            "postgres_cpu_ms_per_commit",
            (ProcessCPU.seconds(ofProcessesNamed: "postgres") - postgresBefore) * 1000 / max(made.commits, 1))
        if nodes > 1 { try await probeAcrossNodes(cluster, into: &report) }

        print(report.table)
        if output.json { print(report.jsonLine) }
    }

    /// The cross-node figures: reads with Chorus-Min-Position on the next node, and live delivery to another node.
    private func probeAcrossNodes(_ cluster: [BenchServer], into report: inout BenchmarkReport) async throws {
        printProgress("\(probes) posts written on one node and read on the next with Chorus-Min-Position")
        let reads = try await readYourWrites(across: cluster)
        report.add("cross_node_read_p50_ms", reads.read.percentile(0.5))
        report.add("cross_node_read_p99_ms", reads.read.percentile(0.99))
        report.add("cross_node_write_then_read_p99_ms", reads.total.percentile(0.99))

        printProgress("\(probes) messages sent on one node, timed to the recipient's live stream on another")
        let sender = try await register(on: cluster[0], "sender")
        let recipient = try await register(on: cluster[1], "recipient")
        let delivery = try await LiveDeliveryProbe(
            server: cluster[0], sender: sender, recipient: recipient, streamingFrom: cluster[1]
        ).measure(messages: probes)
        report.add("cross_node_live_delivery_p50_ms", delivery.p50)
        report.add("cross_node_live_delivery_p99_ms", delivery.p99)
    }

    /// What one wrk process drives: `connections` of the writers, posting to `server` as users signed up there.
    private struct WriterLane {
        let server: BenchServer
        let connections: Int
        let tokens: [String]
    }

    /// `writers` connections over three wrk processes, the i-th on `servers[i % servers.count]`: with more servers
    /// than that, the writers spread over the servers one by one instead.
    private func writerLanes(on servers: [BenchServer]) async throws -> [WriterLane] {
        let count = max(Self.drivers, servers.count)
        var lanes: [WriterLane] = []
        for lane in 0..<count {
            let server = servers[lane % servers.count]
            let connections = writers / count + (lane < writers % count ? 1 : 0)
            var tokens: [String] = []
            for writer in 0..<connections { tokens.append(try await register(on: server, "w\(lane)x\(writer)").token) }
            lanes.append(WriterLane(server: server, connections: connections, tokens: tokens))
        }
        return lanes
    }

    /// Posts acknowledged per second (one event each) with each lane's wrk running at once.
    private func appendRate(lanes: [WriterLane], _ wrk: Wrk) async throws -> Double {
        let results = Mutex<[Result<Wrk.Result, any Error>]>([])
        let seconds = seconds
        // wrk blocks until it ends: each on a thread of its own, so that the three run at once.
        await withCheckedContinuation { (finished: CheckedContinuation<Void, Never>) in
            let group = DispatchGroup()
            for lane in lanes {
                group.enter()
                Thread {
                    let result = Result {
                        try wrk.run(
                            url: lane.server.base + "/v1/posts",
                            script: Wrk.script(
                                method: "POST", tokens: lane.tokens, body: #"{"text":"a cluster benchmark post"}"#),
                            seconds: seconds, connections: lane.connections, threads: 1)
                    }
                    results.withLock { $0.append(result) }
                    group.leave()
                }.start()
            }
            group.notify(queue: .global()) { finished.resume() }
        }
        let runs = try results.withLock { $0 }.map { try $0.get() }
        let acknowledged = runs.reduce(0) { $0 + $1.requests - $1.errors }
        let refused = runs.reduce(0) { $0 + $1.errors }
        if refused > 0 { printProgress("\(refused) writes were refused or failed (not counted)") }
        return Double(acknowledged) / Double(seconds)
    }

    /// For each probe, a post on node i and its read on node i + 1 with the position the write answered: how long
    /// the read took (what waiting for replication adds) and how long write and read took together, in ms.
    private func readYourWrites(across nodes: [BenchServer]) async throws -> (read: Latencies, total: Latencies) {
        var users: [(user: String, token: String)] = []
        for (index, node) in nodes.enumerated() { users.append(try await register(on: node, "reader\(index)")) }
        var (reads, totals) = (Latencies(), Latencies())
        let clock = ContinuousClock()
        for probe in 0..<probes {
            let (writer, reader) = (nodes[probe % nodes.count], nodes[(probe + 1) % nodes.count])
            let started = clock.now
            let written = try await HTTPJSONClient(base: writer.base).exchange(
                "POST", "/v1/posts", token: users[probe % nodes.count].token, json: ["text": "read me \(probe)"])
            guard written.status == 201, let id = written.body["id"] as? String,
                let position = written.headers["chorus-position"]
            else { throw BenchmarkError("a post answered \(written.status): \(written.body)") }
            let answered = clock.now
            let read = try await HTTPJSONClient(base: reader.base).exchange(
                "GET", "/v1/posts/\(id)", token: users[(probe + 1) % nodes.count].token,
                headers: ["Chorus-Min-Position": position])
            guard read.status == 200 else { throw BenchmarkError("the read on the next node answered \(read.status)") }
            reads.add(clock.now - answered)
            totals.add(clock.now - started)
        }
        return (reads, totals)
    }

    private func register(on server: BenchServer, _ name: String) async throws -> (user: String, token: String) {
        let email = "\(name)-\(UUID().uuidString.prefix(8).lowercased())@bench.chorus"
        let (status, body) = try await server.request(
            "POST", "/v1/auth/register", json: ["email": email, "password": "password1", "name": name])
        guard status == 201, let token = body["token"] as? String,
            let user = (body["user"] as? [String: Any])?["id"] as? String
        else { throw BenchmarkError("signing up \(name) answered \(status): \(body)") }
        return (user, token)
    }
}

/// The cluster commits a set of nodes made, and the decisions they had to repeat, summed over their `/metrics`.
private struct ClusterCommitCounts {
    var commits: Double
    var repeatedDecisions: Double

    init(commits: Double, repeatedDecisions: Double) {
        self.commits = commits
        self.repeatedDecisions = repeatedDecisions
    }

    init(of nodes: [BenchServer]) async throws {
        (commits, repeatedDecisions) = (0, 0)
        for node in nodes {
            let text = try await node.metrics()
            commits += MetricsText.sum(of: "chorus_cluster_commits_total", in: text)
            repeatedDecisions += MetricsText.sum(of: "chorus_cluster_repeated_decisions_total", in: text)
        }
    }

    static func - (after: Self, before: Self) -> Self {
        Self(
            commits: after.commits - before.commits,
            repeatedDecisions: after.repeatedDecisions - before.repeatedDecisions)
    }
}
