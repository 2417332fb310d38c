import ArgumentParser
import ChorusBackend
import ChorusCluster
import ChorusDemo
import ChorusFixtures
import ChorusLog
import ChorusProcesses
import ChorusProjections
import ChorusPushPeers
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

struct APIBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "api",
        abstract: "Drive `chorus serve` on a demo log over loopback: feeds, post creation, live delivery.",
        discussion: """
            Starts the server as a child process on a demo log, signs in demo users, and drives it with wrk \
            (installed from Debian's packages when missing, as root): GET /v1/feed/following with many users' \
            tokens, and GET /health the same way (the ceiling: what the server and the machine answer with no \
            work behind the request), both taking gzip as the apps' HTTP stacks do (unless --uncompressed), in \
            --rounds alternating runs; feed_to_ceiling_ratio divides the two rates over all the rounds, which a \
            slow spell of a shared machine moves less than either. Then \
            POST /v1/posts. Live delivery is timed from sending a message to receiving it on the recipient's \
            event stream. Then the feed and the ceiling again with every feed's first page made of posts of four \
            images each (feed_four_images_to_ceiling_ratio); a hashtag's page, GET /v1/hashtags/{tag}/posts, and the \
            ceiling (hashtag_page_to_ceiling_ratio); and the feed and the ceiling once every signed-in user has muted \
            100 words, one of them in about a quarter of the demo's posts (feed_muted_words_to_ceiling_ratio).
            """
    )

    @OptionGroup var output: BenchOutputOptions

    @Option(help: "Events in the demo log.")
    var events = 100_000

    @Option(help: "Seconds each wrk run lasts; the feed and the ceiling get as many in all, over their rounds.")
    var seconds = 10

    @Option(
        help: """
            Alternating runs of the feed and the ceiling (GET /health) that share their seconds \
            (default: 10, or --seconds when fewer).
            """)
    var rounds: Int?

    @Option(help: "Open connections wrk keeps.")
    var connections = 32

    /// wrk shares the machine with the server it measures: every core its threads take is one the server cannot use.
    /// One thread keeps 32 connections busy at these rates; on 2 cores a second one took throughput from the server.
    @Option(help: "Threads wrk runs; it shares the machine with the server it measures.")
    var wrkThreads = 1

    @Option(help: "Demo users signed in to spread the load.")
    var users = 100

    @Option(help: "Messages timed from send to live delivery.")
    var messages = 400

    @Flag(help: "The feed and the ceiling asked for without Accept-Encoding: pages sent as rendered, not gzipped.")
    var uncompressed = false

    @Flag(
        help: """
            The server sends pushes, to a local APNs in this process, and each signed-in user registers a phone: \
            every figure with push on, to compare with a run without.
            """)
    var push = false

    mutating func run() async throws {
        #if DEBUG
        printProgress("warning: this is a debug build; benchmark with `swift run -c release chorus bench api`")
        #endif
        guard events >= 1_000, seconds > 0, connections > 0, wrkThreads > 0, users > 1, messages > 0 else {
            throw ValidationError("sizes must be positive (and --events at least 1000)")
        }
        guard (1...seconds).contains(rounds ?? 1) else {
            throw ValidationError("--rounds must be from 1 to --seconds: each round runs a whole number of seconds")
        }
        let wrk = try Wrk.locateOrInstall()
        let report: BenchmarkReport
        if push {
            let directory = try BenchWorkDirectory(parent: output.workDirectory)
            defer { directory.remove() }
            var measured: BenchmarkReport?
            try await BenchAPNs.run(in: directory.path) { endpoint in
                measured = try await BenchServer.withDemo(
                    events: events, users: users, serverEnvironment: endpoint.serverEnvironment,
                    under: output.workDirectory
                ) { server, tokens in
                    try await registerPhones(server, tokens)
                    return try await measure(server, tokens, wrk, pushingTo: endpoint.peer)
                }
            }
            guard let measured else { throw BenchmarkError("the local APNs stopped before the bench ended") }
            report = measured
        } else {
            report = try await BenchServer.withDemo(events: events, users: users, under: output.workDirectory) {
                server, tokens in try await measure(server, tokens, wrk)
            }
        }
        print(report.table)
        if output.json { print(report.jsonLine) }
    }

    private func measure(
        _ server: BenchServer, _ tokens: [(user: String, token: String)], _ wrk: Wrk, pushingTo apns: LocalAPNs? = nil
    ) async throws -> BenchmarkReport {
        let (feed, health) = try feedAndCeiling(server, tokens, wrk)
        printProgress("POST /v1/posts for \(seconds) s")
        let posts = try wrk.run(
            url: server.base + "/v1/posts",
            script: Wrk.script(method: "POST", tokens: tokens.map(\.token), body: #"{"text":"a benchmark post"}"#),
            seconds: seconds, connections: connections, threads: wrkThreads)
        printProgress("timing \(messages) messages from send to live delivery")
        let delivery = try await LiveDeliveryProbe(server: server, sender: tokens[0], recipient: tokens[1])
            .measure(messages: messages)
        try await postFourImagePosts(server, followedBy: tokens)
        let (photoFeed, photoHealth) = try feedAndCeiling(server, tokens, wrk)
        let (tagged, taggedHealth) = try pageAndCeiling(
            Self.hashtagPage, named: "hashtag page", server, tokens, wrk)
        try await muteWords(server, tokens)
        let (muted, mutedHealth) = try feedAndCeiling(server, tokens, wrk)

        var report = BenchmarkReport(suite: "api")
        report.add("events", Double(events))
        report.add("feed_following_rps", feed.requestsPerSecond, target: .atLeast(20_000))
        report.add("feed_following_p99_ms", feed.p99Milliseconds, target: .atMost(10))
        report.add("feed_following_non_2xx", Double(feed.errors))
        report.add("health_rps", health.requestsPerSecond)
        report.add("feed_to_ceiling_ratio", feed.requestsPerSecond / health.requestsPerSecond)
        report.add("post_create_rps", posts.requestsPerSecond)
        report.add("post_create_p99_ms", posts.p99Milliseconds)
        // Refused writes (503 while the read models lag far behind, say) would flatter the rate: counted apart.
        report.add("post_create_non_2xx", Double(posts.errors))
        report.add("live_delivery_p50_ms", delivery.p50)
        report.add("live_delivery_p99_ms", delivery.p99, target: .atMost(50))
        report.add("feed_four_images_rps", photoFeed.requestsPerSecond)
        report.add("feed_four_images_non_2xx", Double(photoFeed.errors))
        report.add(
            "feed_four_images_to_ceiling_ratio", photoFeed.requestsPerSecond / photoHealth.requestsPerSecond,
            target: .atLeast(0.75))
        report.add("hashtag_page_rps", tagged.requestsPerSecond)
        report.add("hashtag_page_non_2xx", Double(tagged.errors))
        report.add(
            "hashtag_page_to_ceiling_ratio", tagged.requestsPerSecond / taggedHealth.requestsPerSecond,
            target: .atLeast(0.75))
        report.add("feed_muted_words_rps", muted.requestsPerSecond)
        report.add("feed_muted_words_non_2xx", Double(muted.errors))
        report.add(
            "feed_muted_words_to_ceiling_ratio", muted.requestsPerSecond / mutedHealth.requestsPerSecond,
            target: .atLeast(0.75))
        // With --push: the live-delivery messages' pushes, that push was on.
        if let apns { report.add("pushes_arrived", Double(apns.receivedCount)) }
        return report
    }

    /// The page of one of the demo's five tags (`#Coffee`, as the demo writes it).
    private static let hashtagPage = "/v1/hashtags/coffee/posts"

    /// Each signed-in user mutes words up to the 100 an account may have (the demo mutes a few): `exam`, which about a
    /// quarter of the demo's posts hold, and then words it never writes, so that the filter both reads every word and
    /// hides posts a page must read past.
    private func muteWords(_ server: BenchServer, _ tokens: [(user: String, token: String)]) async throws {
        printProgress("muting words for each of the \(tokens.count) signed-in users, up to 100 each")
        let words = ["exam"] + (1..<100).map { "muted\($0) phrase" }
        for signedIn in tokens {
            let (listed, page) = try await server.request("GET", "/v1/me/muted-words?limit=100", token: signedIn.token)
            guard listed == 200 else { throw BenchmarkError("listing muted words answered \(listed)") }
            let already = (page["items"] as? [[String: Any]] ?? []).count
            for word in words.prefix(100 - already) {
                let (status, _) = try await server.request(
                    "POST", "/v1/me/muted-words", token: signedIn.token, json: ["word": word])
                guard status == 201 else { throw BenchmarkError("muting a word answered \(status)") }
            }
        }
    }

    /// Each of the signed-in users registers an iPhone: their notifications and messages are then pushed.
    private func registerPhones(_ server: BenchServer, _ tokens: [(user: String, token: String)]) async throws {
        printProgress("registering a phone for each of the \(tokens.count) signed-in users")
        for (index, signedIn) in tokens.enumerated() {
            let phone = String(format: "%064x", index)
            let (status, _) = try await server.request(
                "POST", "/v1/me/devices", token: signedIn.token, json: ["platform": "apns", "token": phone])
            guard status == 201 else { throw BenchmarkError("registering a phone answered \(status)") }
        }
    }

    /// A new user uploads four of the demo's photos and posts a page and a half of posts with all four, with alt
    /// texts, and every signed-in user follows them: the first page of each Following feed is then posts of four
    /// images alone.
    private func postFourImagePosts(_ server: BenchServer, followedBy tokens: [(user: String, token: String)])
        async throws
    {
        printProgress("posting four-image posts, followed by the \(tokens.count) signed-in users")
        var photos: [String] = []
        let (_, page) = try await server.request("GET", "/v1/feed/home?media=true&limit=100", token: tokens[0].token)
        for post in page["items"] as? [[String: Any]] ?? [] {
            for image in post["media"] as? [[String: Any]] ?? [] {
                if let id = image["id"] as? String, !photos.contains(id) { photos.append(id) }
            }
        }
        guard photos.count >= 4 else { throw BenchmarkError("the demo log holds \(photos.count) photos, not 4") }
        let (status, registered) = try await server.request(
            "POST", "/v1/auth/register",
            json: ["email": "photographer-\(UUID().uuidString)@bench.chorus", "password": "password", "name": "Bench"])
        guard status == 201, let token = registered["token"] as? String,
            let poster = (registered["user"] as? [String: Any])?["id"] as? String
        else { throw BenchmarkError("the photographer's sign-up answered \(status)") }
        // A post shows only its author's own uploads.
        var media: [[String: String]] = []
        let client = HTTPJSONClient(base: server.base)
        for photo in photos.prefix(4) {
            let (bytes, type) = try await client.bytes("/v1/media/\(photo)")
            let (uploaded, answer) = try await client.upload(bytes, type: type ?? "image/jpeg", token: token)
            guard uploaded == 201, let id = answer["id"] as? String else {
                throw BenchmarkError("the photographer's upload answered \(uploaded)")
            }
            media.append(["id": id, "alt": "Photo \(media.count + 1) of four"])
        }
        for number in 0..<30 {
            let (posted, _) = try await server.request(
                "POST", "/v1/posts", token: token, json: ["caption": "Four photos, \(number)", "media": media])
            guard posted == 201 else { throw BenchmarkError("a four-image post answered \(posted)") }
        }
        for reader in tokens {
            let (followed, _) = try await server.request("PUT", "/v1/users/\(poster)/follow", token: reader.token)
            guard followed == 200 else { throw BenchmarkError("a follow answered \(followed)") }
        }
    }

    /// GET /v1/feed/following and GET /health (the ceiling), as ``pageAndCeiling(_:named:_:_:_:)``.
    private func feedAndCeiling(_ server: BenchServer, _ tokens: [(user: String, token: String)], _ wrk: Wrk) throws
        -> (feed: Wrk.Result, health: Wrk.Result)
    {
        try pageAndCeiling("/v1/feed/following", named: "feed", server, tokens, wrk)
    }

    /// GET `path` (`name` in the progress lines) and GET /health (the ceiling) in ``rounds`` alternating runs, the page
    /// first in every other round:
    /// what each answered over all its rounds (``Wrk/Result/init(combining:)``). Run one after the other, 10 s each, a
    /// slow spell of the shared machine fell on one of them, and the ratio swung from run to run.
    private func pageAndCeiling(
        _ path: String, named name: String, _ server: BenchServer, _ tokens: [(user: String, token: String)],
        _ wrk: Wrk
    ) throws -> (feed: Wrk.Result, health: Wrk.Result) {
        let script = Wrk.script(method: "GET", tokens: tokens.map(\.token), acceptingGzip: !uncompressed)
        let rounds = self.rounds ?? min(10, seconds)
        let roundSeconds = seconds / rounds
        printProgress(
            "GET \(path) and GET /health (the ceiling) in \(rounds) alternating rounds of \(roundSeconds) s "
                + "each, over \(connections) connections from \(wrkThreads) wrk threads")
        var (feeds, ceilings) = ([Wrk.Result](), [Wrk.Result]())
        for round in 0..<rounds {
            func run(_ path: String) throws -> Wrk.Result {
                try wrk.run(
                    url: server.base + path, script: script, seconds: roundSeconds, connections: connections,
                    threads: wrkThreads)
            }
            let (feed, health): (Wrk.Result, Wrk.Result)
            if round.isMultiple(of: 2) {
                feed = try run(path)
                health = try run("/health")
            } else {
                health = try run("/health")
                feed = try run(path)
            }
            feeds.append(feed)
            ceilings.append(health)
            printProgress(
                "round \(round + 1): \(name) \(Int(feed.requestsPerSecond)) requests/s, /health "
                    + "\(Int(health.requestsPerSecond))")
        }
        return (Wrk.Result(combining: feeds), Wrk.Result(combining: ceilings))
    }
}

/// `chorus serve` as a child process on a free port.
final class BenchServer: @unchecked Sendable {
    let base: String
    /// The server's admin token, made for this run: `/metrics` and the positions of `/health` are for it alone.
    let adminToken = "bench-admin-" + UUID().uuidString
    private let process: ChildProcess
    var processIdentifier: Int32 { process.processIdentifier }

    /// Starts `chorus serve` on `data` with `arguments` and `environment` besides.
    init(data: String, arguments: [String] = [], environment: [String: String] = [:]) async throws {
        let port = try LoopbackPort.free()
        base = "http://127.0.0.1:\(port)"
        process = try ChildProcess(
            Executables.current.path,
            ["serve", "--data", data, "--port", String(port)] + arguments,
            environment: environment.merging(["CHORUS_ADMIN_TOKEN": adminToken]) { $1 }, output: .discarded,
            errors: .discarded)
        for _ in 0..<600 {
            if (try? await request("GET", "/health").status) == 200 { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw BenchmarkError("chorus serve did not come up within 60 s")
    }

    /// The server's anonymous resident memory (`RssAnon`), in MiB: its heap, not LMDB's mapped pages.
    func anonymousMemoryMiB() -> Double {
        Double(processStatusKilobytes("RssAnon", of: String(process.processIdentifier)) ?? 0) / 1024
    }

    func stop() {
        process.terminate()
        process.waitForExit()
    }

    /// Runs `body` with a server on a fresh demo log of about `events` events and the first `users` demo users signed
    /// in, all in a work directory under `parent` that is removed afterwards: how `bench api`, `bench soak` and
    /// `bench day` begin. `more` demo users after those must exist too, for `body` to use; the demo's follows are made
    /// by `graph`, and the server is started with `serverArguments` and `serverEnvironment` besides: by default with no
    /// rate limits, as a load test's one client, which floods a few users' writes, would meet them (`bench day` keeps
    /// the users' limits on).
    static func withDemo<R>(
        events: Int, users: Int, more: Int = 0, graph: FollowerGraph = .modest,
        serverArguments: [String] = ["--no-rate-limits"], serverEnvironment: [String: String] = [:],
        under parent: String?, _ body: (BenchServer, [(user: String, token: String)]) async throws -> R
    ) async throws -> R {
        let workDirectory = try BenchWorkDirectory(parent: parent)
        defer { workDirectory.remove() }
        let (data, demo) = try await demoData(in: workDirectory, events: events, graph: graph)
        guard users + more <= demo.users else {
            throw BenchmarkError(
                "a demo log of \(events) events holds \(demo.users) users, and this bench needs \(users + more): "
                    + "ask for fewer --users or more --events")
        }
        let server = try await BenchServer(data: data.root, arguments: serverArguments, environment: serverEnvironment)
        defer { server.stop() }
        if users > 0 { printProgress("signing in \(users) demo users") }
        return try await body(server, try await server.logInDemoUsers(0..<users))
    }

    /// A data directory in `workDirectory` holding a demo log of about `events` events, its follows made by `graph`,
    /// and its read models.
    static func demoData(in workDirectory: BenchWorkDirectory, events: Int, graph: FollowerGraph = .modest)
        async throws -> (DataDirectory, DemoWorkload.Summary)
    {
        printProgress("working in \(workDirectory.path); writing a demo log of \(events) events (\(graph) graph)")
        let data = DataDirectory(workDirectory.path + "/data")
        let log = try data.openLog()
        defer { log.close() }
        let summary = try await DemoCommand.writeDemo(into: data, log: log, events: events, seed: 1, graph: graph)
        let keys = try data.openKeys()
        defer { keys.close() }
        try ProjectionGenerations(dataDirectory: data.root).rebuildAndSwap(log: log, keys: keys)
        return (data, summary)
    }

    /// Logs in the demo users numbered `indices` (`user<N>@demo.chorus`, password "password").
    func logInDemoUsers(_ indices: Range<Int>) async throws -> [(user: String, token: String)] {
        var signedIn: [(user: String, token: String)] = []
        for index in indices {
            signedIn.append(try await logIn(email: "user\(index)@demo.chorus", password: "password"))
        }
        return signedIn
    }

    func logIn(email: String, password: String) async throws -> (user: String, token: String) {
        let signedIn = try await logInWithProfile(email: email, password: password)
        return (signedIn.user, signedIn.token)
    }

    /// Logs in; returns the user's id, the token and the profile the answer holds.
    func logInWithProfile(email: String, password: String) async throws
        -> (user: String, token: String, profile: [String: Any])
    {
        let (status, body) = try await request("POST", "/v1/auth/login", json: ["email": email, "password": password])
        guard status == 200, let token = body["token"] as? String, let profile = body["user"] as? [String: Any],
            let user = profile["id"] as? String
        else { throw BenchmarkError("login of \(email) answered \(status)") }
        return (user, token, profile)
    }

    @discardableResult
    func request(_ method: String, _ path: String, token: String? = nil, json: [String: Any]? = nil) async throws
        -> (status: Int, body: [String: Any])
    {
        try await HTTPJSONClient(base: base).call(method, path, token: token, json: json)
    }

    /// `/health` as the admin sees it: with the log's head (`position`) and the read models' positions.
    func health() async throws -> [String: Any] {
        try await request("GET", "/health", token: adminToken).body
    }

    /// `/metrics`, in Prometheus's text format.
    func metrics() async throws -> String {
        try await HTTPJSONClient(base: base).text("/metrics", token: adminToken)
    }
}
