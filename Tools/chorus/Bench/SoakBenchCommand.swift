import ArgumentParser
import ChorusBackend
import Foundation

struct SoakBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "soak",
        abstract:
            "Drive `chorus serve` with a mixed, realistic load for minutes; report each minute and memory growth.",
        discussion: """
            Starts the server on a demo log and drives it with wrk for --minutes one-minute rounds of mixed traffic \
            from many users: feeds, notifications, conversations, profiles, posts, likes, comments, follows and \
            messages. Prints each minute's requests/s, p99, failed requests and the server's anonymous resident \
            memory (its heap; LMDB's mapped pages are page cache and grow with the log). Memory must not grow \
            after the warm-up (the first two minutes).
            """
    )

    /// Demo users after the signed-in ones, followed and messaged by everyone: users who send no requests themselves,
    /// so that none is their own.
    private static let others = 10

    @OptionGroup var output: BenchOutputOptions

    @Option(help: "Minutes of load (one wrk round each).")
    var minutes = 10

    @Option(help: "Events in the demo log to start from.")
    var events = 100_000

    @Option(help: "Open connections wrk keeps.")
    var connections = 32

    @Option(help: "Demo users signed in to spread the load.")
    var users = 100

    mutating func run() async throws {
        #if DEBUG
        printProgress("warning: this is a debug build; benchmark with `swift run -c release chorus bench soak`")
        #endif
        guard minutes >= 3, events >= 1_000, connections > 0, users > 2 else {
            throw ValidationError("--minutes must be at least 3 (two of warm-up), --events at least 1000")
        }
        let wrk = try Wrk.locateOrInstall()
        let report = try await BenchServer.withDemo(
            events: events, users: users, more: Self.others, under: output.workDirectory
        ) {
            server, tokens in try await soak(server, tokens, wrk)
        }
        print(report.table)
        if output.json { print(report.jsonLine) }
    }

    private func soak(_ server: BenchServer, _ tokens: [(user: String, token: String)], _ wrk: Wrk) async throws
        -> BenchmarkReport
    {
        let others = try await server.logInDemoUsers(users..<(users + Self.others)).map(\.user)
        let home = try await server.request("GET", "/v1/feed/home?limit=100", token: tokens[0].token)
        let posts = (home.body["items"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        guard posts.count >= 10 else { throw BenchmarkError("the demo log has too few posts to like") }

        // Roughly what an app's screens ask for: mostly reading, a write in every six or so requests.
        var requests: [(weight: Int, method: String, path: String, body: String?)] = [
            (30, "GET", "/v1/feed/following", nil), (12, "GET", "/v1/feed/home", nil),
            (8, "GET", "/v1/notifications", nil), (5, "GET", "/v1/conversations", nil), (4, "GET", "/v1/me", nil),
            (5, "POST", "/v1/posts", #"{"text":"a soak test post"}"#),
        ]
        for (index, post) in posts.prefix(20).enumerated() {
            requests.append((1, index % 2 == 0 ? "PUT" : "DELETE", "/v1/posts/\(post)/like", nil))
            requests.append((1, "GET", "/v1/posts/\(post)/comments", nil))
        }
        for post in posts.prefix(5) { requests.append((1, "POST", "/v1/posts/\(post)/comments", #"{"text":"nice"}"#)) }
        for other in others {
            requests.append((1, "PUT", "/v1/users/\(other)/follow", nil))
            requests.append((1, "GET", "/v1/users/\(other)", nil))
            requests.append((1, "POST", "/v1/messages", #"{"to":"\#(other)","text":"hello"}"#))
        }
        let script = Wrk.mixedScript(tokens: tokens.map(\.token), requests: requests)

        print("minute  requests/s  p99 ms  failed  server heap MiB  log head")
        var rounds: [(rate: Double, p99: Double, failed: Int, heap: Double)] = []
        for minute in 1...minutes {
            let round = try wrk.run(url: server.base, script: script, seconds: 60, connections: connections, threads: 1)
            let heap = server.anonymousMemoryMiB()
            let head = (try? await server.health()["position"] as? Int) ?? 0
            rounds.append((round.requestsPerSecond, round.p99Milliseconds, round.errors, heap))
            print(
                String(
                    format: "%6d  %10.0f  %6.2f  %6d  %15.1f  %8d", minute, round.requestsPerSecond,
                    round.p99Milliseconds, round.errors, heap, head))
        }
        let settled = rounds.dropFirst(2)
        let growth = (settled.last?.heap ?? 0) / max(settled.first?.heap ?? 1, 1)
        var report = BenchmarkReport(suite: "soak")
        report.add("minutes", Double(minutes))
        report.add("soak_rps_mean", settled.map(\.rate).reduce(0, +) / Double(settled.count))
        report.add("soak_rps_min", settled.map(\.rate).min() ?? 0)
        report.add("soak_p99_ms_max", settled.map(\.p99).max() ?? 0)
        report.add("soak_failed_requests", Double(rounds.map(\.failed).reduce(0, +)), target: .atMost(0))
        report.add("heap_mib_after_warmup", settled.first?.heap ?? 0)
        report.add("heap_mib_last", settled.last?.heap ?? 0)
        report.add("heap_growth_ratio", growth, target: .atMost(1.10))
        return report
    }
}
