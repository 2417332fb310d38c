import ArgumentParser
import ChorusBackend
import ChorusCluster
import ChorusFixtures
import ChorusProcesses
import Foundation

/// `chorus bench postgres`: Chorus's Following feed over HTTP against what a team would build instead — PostgreSQL
/// answering the same page from a materialised home table as a bare prepared query through pgbench — on one demo log,
/// in one run.
struct PostgresBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "postgres",
        abstract: "The Following feed over HTTP against PostgreSQL answering the same page from a home table.",
        discussion: """
            Writes a demo log, exports its Following feeds into a throwaway PostgreSQL (Debian's postgresql; \
            installed by `make test`) as users, posts with their counters, likes and a home table holding every \
            user's feed, and checks that both answer the first user's page with the same posts. Then, alternately, \
            pgbench runs the page's query prepared (-M prepared: no HTTP, no JSON, no auth) for a random one of \
            --users demo users, and wrk asks `chorus serve` for GET /v1/feed/following with their tokens, each for \
            --seconds over --connections connections, --rounds times. chorus_to_postgres_ratio divides the medians.
            """
    )

    @OptionGroup var output: BenchOutputOptions

    @Option(help: "Events in the demo log.")
    var events = 100_000

    @Option(help: "Seconds each pgbench and wrk run lasts.")
    var seconds = 10

    @Option(help: "Connections pgbench and wrk keep open.")
    var connections = 32

    @Option(help: "Demo users whose feeds are read.")
    var users = 100

    @Option(help: "Runs of each, alternating.")
    var rounds = 2

    mutating func run() async throws {
        #if DEBUG
        printProgress("warning: this is a debug build; benchmark with `swift run -c release chorus bench postgres`")
        #endif
        guard events >= 1_000, seconds > 0, connections > 0, users > 0, rounds > 0 else {
            throw ValidationError(
                "--events must be at least 1000; --seconds, --connections, --users, --rounds positive")
        }
        let wrk = try Wrk.locateOrInstall()
        let workDirectory = try BenchWorkDirectory(parent: output.workDirectory)
        defer { workDirectory.remove() }
        let (data, demo) = try await BenchServer.demoData(in: workDirectory, events: events)
        guard users <= demo.users else {
            throw BenchmarkError("a demo log of \(events) events holds \(demo.users) users; ask for fewer --users")
        }

        printProgress("exporting the Following feeds into PostgreSQL tables")
        let export = try HomeTableExport.write(from: data, benchUsers: users, into: workDirectory.path)
        let postgres = try LocalPostgresServer(port: try LoopbackPort.free())
        defer { postgres.stop() }
        try postgres.psql(HomeTableExport.schema)
        for table in ["users", "posts", "likes", "home", "bench_users"] {
            try postgres.psql("\\copy \(table) FROM '\(workDirectory.path)/\(table).csv' WITH (FORMAT csv)")
        }
        try postgres.psql("VACUUM ANALYZE")
        let script = workDirectory.path + "/feed.sql"
        try ("\\set n random(1, \(users))\n" + HomeTableExport.feedQuery + "\n").write(
            toFile: script, atomically: true, encoding: .utf8)

        let server = try await BenchServer(data: data.root, arguments: ["--no-rate-limits"])
        defer { server.stop() }
        printProgress("signing in \(users) demo users")
        let tokens = try await server.logInDemoUsers(0..<users)
        try await Self.checkSamePage(postgres, server, token: tokens[0].token)

        var postgresRates: [Double] = []
        var chorusRates: [Double] = []
        var chorusP99: [Double] = []
        for round in 1...rounds {
            printProgress(
                "round \(round): pgbench, the feed query prepared, \(seconds) s over \(connections) connections")
            postgresRates.append(
                try Self.pgbenchRate(
                    postgres.pgbench([
                        "-n", "-M", "prepared", "-f", script, "-c", String(connections), "-j", "1", "-T",
                        String(seconds),
                    ])))
            printProgress("round \(round): wrk, GET /v1/feed/following, \(seconds) s over \(connections) connections")
            let feed = try wrk.run(
                url: server.base + "/v1/feed/following",
                script: Wrk.script(method: "GET", tokens: tokens.map(\.token)), seconds: seconds,
                connections: connections, threads: 1)
            chorusRates.append(feed.requestsPerSecond)
            chorusP99.append(feed.p99Milliseconds)
        }

        var report = BenchmarkReport(suite: "postgres")
        report.add("events", Double(events))
        report.add("home_rows", Double(export.homeRows))
        report.add("posts", Double(export.postRows))
        report.add("postgres_feed_qps", postgresRates.median)
        report.add("chorus_feed_rps", chorusRates.median)
        report.add("chorus_feed_p99_ms", chorusP99.median)
        report.add(
            "chorus_to_postgres_ratio", chorusRates.median / postgresRates.median, target: .atLeast(2))
        print(report.table)
        if output.json { print(report.jsonLine) }
    }

    /// Both answer the first benchmark user's first page with the same posts, in the same order.
    private static func checkSamePage(_ postgres: LocalPostgresServer, _ server: BenchServer, token: String)
        async throws
    {
        let query = HomeTableExport.feedQuery.replacingOccurrences(of: ":n", with: "1")
        let fromPostgres = try postgres.psql(query).split(separator: "\n").map { String($0.prefix { $0 != "|" }) }
        let (status, body) = try await server.request("GET", "/v1/feed/following?limit=20", token: token)
        let fromChorus = (body["items"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        guard status == 200, !fromChorus.isEmpty, fromPostgres == fromChorus else {
            throw BenchmarkError(
                "PostgreSQL and Chorus answer different pages: \(fromPostgres.prefix(3)) against \(fromChorus.prefix(3))"
            )
        }
    }

    /// The transactions per second pgbench reports, without the time connections took to open.
    private static func pgbenchRate(_ output: String) throws -> Double {
        guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("tps = ") }),
            let rate = Double(line.dropFirst("tps = ".count).prefix { $0 != " " })
        else { throw BenchmarkError("could not read pgbench's output:\n\(output)") }
        return rate
    }
}
