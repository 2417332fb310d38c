import ArgumentParser
import ChorusCluster
import Foundation
import Synchronization

struct ClusterBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cluster",
        abstract: "Three `chorus serve --cluster` nodes on one PostgreSQL on this machine, against one embedded node.",
        discussion: """
            Starts a throwaway PostgreSQL (Debian's postgresql; initdb in the work directory, loopback only), then \
            measures, in the same run: appends/s of --writers connections posting over three wrk processes to one \
            embedded `chorus serve`, then the same spread over three `chorus serve --cluster` nodes (the ratio of \
            the two is the figure to compare across machines); then, one at a time, a post written on one node and \
            read on the next with Chorus-Min-Position (the read's latency is what replication adds), and a message \
            sent on one node and delivered on another node's live stream. Every process shares this machine's \
            cores: the figures bound what one box does, not what a cluster of boxes does.
            """
    )

    @OptionGroup var output: BenchOutputOptions

    @Option(help: "Seconds each write run lasts.")
    var seconds = 10

    @Option(help: "Open connections writing at once, spread over the nodes.")
    var writers = 64

    @Option(help: "Writes read back on another node, and messages timed to another node's live stream.")
    var probes = 300

    /// One wrk process per node, each with one thread: three drivers in both runs, so that the two differ only in
    /// what serves them.
    private static let nodes = 3

    mutating func run() async throws {
        #if DEBUG
        printProgress("warning: this is a debug build; benchmark with `swift run -c release chorus bench cluster`")
        #endif
        guard seconds > 0, writers >= Self.nodes, probes > 0 else {
            throw ValidationError("--seconds and --probes must be positive, --writers at least \(Self.nodes)")
        }
        let wrk = try Wrk.locateOrInstall()
        let workDirectory = try BenchWorkDirectory(parent: output.workDirectory)
        defer { workDirectory.remove() }
        printProgress("working in \(workDirectory.path); starting PostgreSQL")
        let postgres = try LocalPostgresServer(port: try FreePort.find())
        defer { postgres.stop() }

        var report = BenchmarkReport(suite: "cluster")
        report.add("writers", Double(writers))

        printProgress("one embedded node: \(writers) writers for \(seconds) s")
        let single = try await BenchServer(data: workDirectory.path + "/single", arguments: ["--no-rate-limits"])
        let singleRate = try await appendRate(on: [single], wrk)
        single.stop()
        report.add("single_node_appends_per_s", singleRate)

        printProgress("\(Self.nodes) cluster nodes: \(writers) writers spread over them for \(seconds) s")
        var nodes: [BenchServer] = []
        defer { for node in nodes { node.stop() } }
        for index in 0..<Self.nodes {
            nodes.append(
                try await BenchServer(
                    data: workDirectory.path + "/node-\(index)",
                    arguments: ["--cluster", postgres.url, "--no-rate-limits"]))
        }
        let clusterRate = try await appendRate(on: nodes, wrk)
        report.add("cluster_appends_per_s", clusterRate)
        report.add("cluster_to_single_node_ratio", clusterRate / singleRate)

        printProgress("\(probes) posts written on one node and read on the next with Chorus-Min-Position")
        let reads = try await readYourWrites(across: nodes)
        report.add("cross_node_read_p50_ms", reads.read.percentile(0.5))
        report.add("cross_node_read_p99_ms", reads.read.percentile(0.99))
        report.add("cross_node_write_then_read_p99_ms", reads.total.percentile(0.99))

        printProgress("\(probes) messages sent on one node, timed to the recipient's live stream on another")
        let sender = try await register(on: nodes[0], "sender")
        let recipient = try await register(on: nodes[1], "recipient")
        let delivery = try await LiveDeliveryProbe(
            server: nodes[0], sender: sender, recipient: recipient, streamingFrom: nodes[1]
        ).measure(messages: probes)
        report.add("cross_node_live_delivery_p50_ms", delivery.p50)
        report.add("cross_node_live_delivery_p99_ms", delivery.p99)

        print(report.table)
        if output.json { print(report.jsonLine) }
    }

    /// Posts acknowledged per second (one event each) with `writers` connections over three wrk processes, the i-th
    /// on `servers[i % servers.count]` with users signed up there.
    private func appendRate(on servers: [BenchServer], _ wrk: Wrk) async throws -> Double {
        var lanes: [(server: BenchServer, connections: Int, tokens: [String])] = []
        for lane in 0..<Self.nodes {
            let server = servers[lane % servers.count]
            let connections = writers / Self.nodes + (lane < writers % Self.nodes ? 1 : 0)
            var tokens: [String] = []
            for writer in 0..<connections { tokens.append(try await register(on: server, "w\(lane)x\(writer)").token) }
            lanes.append((server, connections, tokens))
        }
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
