import ArgumentParser
import ChorusDelivery
import ChorusPushPeers
import Crypto
import Foundation
import Synchronization

struct PushBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Pushes from a fresh `chorus serve` to a local APNs, against that endpoint's own ceiling.",
        discussion: """
            Starts a local APNs-compatible endpoint (HTTP/2 over TLS, checking every provider token's ES256 \
            signature) in this process and a server that pushes to it. --authors users each register \
            --devices-per-author phones and post once; likers then like every author's post, each like pushing to \
            all of the author's phones. delivered_per_s counts pushes arriving per second from the first like sent \
            to the last push arrived; the ceiling is h2load (Debian's nghttp2-client, installed when missing and \
            the bench runs as root) sending as many of the same requests straight to the endpoint over one HTTP/2 \
            connection, --concurrency streams at once, with no Chorus in between. Rounds alternate. \
            server_cpu_us_per_push is the server's CPU time over those rounds (the likes, one per \
            --devices-per-author pushes, included) per push; endpoint_cpu_us_per_request is this process's, the \
            endpoint's, over the ceiling's. Then --rate likes per second for --seconds while --feed-readers read \
            the Home feed, twice: first to posts of authors with no phone, pushing nothing, then of authors with one \
            phone each. like_to_push_ms_p50/p99 is from each like's request being sent to its push arriving; \
            feed_pushing_to_not_ratio divides the feed reads per second of the second by the first's; those readers \
            share this process with the endpoint, so whether push on slows the feed is `bench api --push` against \
            `bench api`.
            """
    )

    @OptionGroup var output: BenchOutputOptions

    @Option(help: "Authors whose phones the throughput rounds push to.")
    var authors = 10

    @Option(help: "Phones each of those authors registers (at most 100).")
    var devicesPerAuthor = 100

    @Option(help: "Likers in each throughput round: each likes every author's post.")
    var likers = 20

    @Option(help: "Streams h2load keeps in flight for the ceiling.")
    var concurrency = 256

    @Option(help: "Rounds of the ceiling and of Chorus, alternating.")
    var rounds = 2

    @Option(help: "Likes per second in the latency phase.")
    var rate = 1_000

    @Option(help: "Seconds of the latency phase.")
    var seconds = 5

    @Option(help: "Clients reading the Home feed during the latency phase.")
    var feedReaders = 4

    mutating func run() async throws {
        #if DEBUG
        printProgress("warning: this is a debug build; benchmark with `swift run -c release chorus bench push`")
        #endif
        guard authors >= 1, (1...100).contains(devicesPerAuthor), likers >= 1, concurrency >= 1, rounds >= 1,
            rate >= 1, seconds >= 1, feedReaders >= 0
        else { throw ValidationError("every count must be positive, and --devices-per-author at most 100") }
        let workDirectory = try BenchWorkDirectory(parent: output.workDirectory)
        defer { workDirectory.remove() }
        let command = self
        try await BenchAPNs.run(in: workDirectory.path) { endpoint in
            let server = try await BenchServer(
                data: workDirectory.path + "/data", arguments: ["--no-rate-limits"],
                environment: endpoint.serverEnvironment)
            defer { server.stop() }
            let report = try await command.measure(server, endpoint.peer, key: endpoint.key)
            print(report.table)
            if command.output.json { print(report.jsonLine) }
        }
    }

    private func measure(_ server: BenchServer, _ apns: LocalAPNs, key: P256.Signing.PrivateKey) async throws
        -> BenchmarkReport
    {
        let h2load = try H2load.locateOrInstall()
        printProgress(
            "signing up \(authors) authors with \(devicesPerAuthor) phones each, and \(likers * rounds) likers")
        let crowd = try await PushCrowd(server: server, authors: authors, phones: devicesPerAuthor)
        let pushes = authors * devicesPerAuthor * likers
        let bearer = try await APNsProviderToken(
            pem: key.pemRepresentation, keyID: BenchAPNs.keyID, teamID: BenchAPNs.teamID
        )
        .token(at: Date())
        var ceiling: [Duration] = []
        var chorus: [Duration] = []
        // CPU seconds the endpoint (this process) spent on the ceiling's requests, and the server on its pushes.
        var (endpointCPU, serverCPU) = (0.0, 0.0)
        let endpoint = getpid()
        for round in 1...rounds {
            let endpointBefore = ProcessCPU.seconds(of: endpoint)
            ceiling.append(
                try await Self.ceiling(
                    pushes, tokens: crowd.tokens, streams: concurrency, port: apns.port, bearer: bearer, with: h2load))
            endpointCPU += ProcessCPU.seconds(of: endpoint) - endpointBefore
            let likersOfRound = try await crowd.signUp(likers, as: "liker\(round)-")
            let serverBefore = ProcessCPU.seconds(of: server.processIdentifier)
            chorus.append(try await crowd.likeEveryPost(by: likersOfRound, expecting: pushes, at: apns))
            serverCPU += ProcessCPU.seconds(of: server.processIdentifier) - serverBefore
            printProgress(
                "round \(round): \(pushes) pushes straight in \(BenchmarkReport.format(ceiling.last!.seconds)) s, "
                    + "through Chorus in \(BenchmarkReport.format(chorus.last!.seconds)) s")
        }
        let probe = PushLatencyProbe(server: server, crowd: crowd, rate: rate, seconds: seconds)
        printProgress(
            "\(rate) likes/s for \(seconds) s, pushing nothing, while \(feedReaders) clients read the Home feed")
        let quiet = try await probe.run(at: apns, feedReaders: feedReaders, phones: 0)
        printProgress("\(rate) likes/s for \(seconds) s, each pushed, while \(feedReaders) clients read the Home feed")
        let latency = try await probe.run(at: apns, feedReaders: feedReaders, phones: 1)

        let delivered = Double(pushes * rounds) / chorus.reduce(.zero, +).seconds
        let straight = Double(pushes * rounds) / ceiling.reduce(.zero, +).seconds
        var report = BenchmarkReport(suite: "push")
        report.add("delivered_per_s", delivered, target: .atLeast(5_000))
        report.add("endpoint_ceiling_per_s", straight)
        report.add("delivered_to_ceiling_ratio", delivered / straight)
        report.add("server_cpu_us_per_push", serverCPU * 1e6 / Double(pushes * rounds))
        report.add("endpoint_cpu_us_per_request", endpointCPU * 1e6 / Double(pushes * rounds))
        report.add("like_to_push_ms_p50", latency.pushes.percentile(0.5))
        report.add("like_to_push_ms_p99", latency.pushes.percentile(0.99), target: .atMost(500))
        report.add("likes_per_s_sent", latency.likesPerSecond)
        report.add("feed_reads_per_s_pushing", latency.feedReadsPerSecond)
        report.add("feed_reads_per_s_not_pushing", quiet.feedReadsPerSecond)
        // No target: the readers share this process with the endpoint (see `bench api --push` for push's cost).
        report.add("feed_pushing_to_not_ratio", latency.feedReadsPerSecond / quiet.feedReadsPerSecond)
        return report
    }

    /// The time `count` requests take sent straight to the endpoint by h2load, `streams` at once over one HTTP/2
    /// connection: the requests a like's pushes make (headers, provider token and payload), to every phone in turn.
    private static func ceiling(
        _ count: Int, tokens: [String], streams: Int, port: Int, bearer: String, with h2load: H2load
    ) async throws -> Duration {
        let payload = PushPayload(
            kind: .like, actorName: "liker1-0", notificationID: UUID().uuidString, postID: UUID().uuidString,
            userID: UUID().uuidString, position: 1, badge: 1
        ).apns()
        let like = APNsRequest(
            deviceToken: tokens[0], topic: BenchAPNs.topic, pushType: .alert, id: UUID(),
            expiration: Date().addingTimeInterval(3600), payload: payload)
        var request = like.httpRequest(base: "https://localhost:\(port)", bearer: bearer)
        // h2load sends the same headers each time; APNs makes an id for a push that comes without one.
        request.headers.remove(name: "apns-id")
        let perSecond = try await h2load.run(
            request, body: payload, paths: tokens.map { "/3/device/\($0)" }, count: count, streams: streams)
        return .seconds(Double(count) / perSecond)
    }
}

/// The users of the push benchmark: authors with their phones and a post each, and likers made per round.
struct PushCrowd: Sendable {
    let server: BenchServer
    /// Each author's token and post.
    let authors: [(token: String, post: String)]
    /// Every phone's device token.
    let tokens: [String]

    init(server: BenchServer, authors count: Int, phones: Int) async throws {
        self.server = server
        var authors: [(token: String, post: String)] = []
        var tokens: [String] = []
        for author in try await Self.signUp(count, as: "author-", on: server) {
            for _ in 0..<phones {
                let token = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
                let (status, _) = try await server.request(
                    "POST", "/v1/me/devices", token: author, json: ["platform": "apns", "token": token])
                guard status == 201 else { throw BenchmarkError("registering a phone answered \(status)") }
                tokens.append(token)
            }
            let (status, post) = try await server.request("POST", "/v1/posts", token: author, json: ["text": "Hello"])
            guard status == 201, let id = post["id"] as? String else {
                throw BenchmarkError("posting answered \(status)")
            }
            authors.append((author, id))
        }
        self.authors = authors
        self.tokens = tokens
    }

    func signUp(_ count: Int, as prefix: String) async throws -> [String] {
        try await Self.signUp(count, as: prefix, on: server)
    }

    /// Signs `count` users up; answers their tokens.
    static func signUp(_ count: Int, as prefix: String, on server: BenchServer) async throws -> [String] {
        let run = UUID().uuidString.prefix(8).lowercased()
        return try await withThrowingTaskGroup(of: String.self) { group in
            var tokens: [String] = []
            for index in 0..<count {
                // Eight at once: each waits for its password's hash.
                if index >= 8, let token = try await group.next() { tokens.append(token) }
                group.addTask {
                    let (status, body) = try await server.request(
                        "POST", "/v1/auth/register",
                        json: [
                            "email": "\(prefix)\(index)-\(run)@bench.chorus", "password": "bench-password",
                            "name": "\(prefix)\(index)",
                        ])
                    guard status == 201, let token = body["token"] as? String else {
                        throw BenchmarkError("signing up answered \(status)")
                    }
                    return token
                }
            }
            return try await group.reduce(into: tokens) { $0.append($1) }
        }
    }

    /// Each of `likers` likes every author's post, 16 likes at once; answers the time from the first like sent until
    /// `expected` more pushes have arrived at `apns`.
    func likeEveryPost(by likers: [String], expecting expected: Int, at apns: LocalAPNs) async throws -> Duration {
        let before = apns.receivedCount
        let start = ContinuousClock.now
        let likes = likers.flatMap { liker in authors.map { (liker, $0.post) } }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, like) in likes.enumerated() {
                if index >= 16 { try await group.next() }
                group.addTask {
                    let (status, _) = try await server.request("PUT", "/v1/posts/\(like.1)/like", token: like.0)
                    guard status == 200 else { throw BenchmarkError("a like answered \(status)") }
                }
            }
            try await group.waitForAll()
        }
        let deadline = ContinuousClock.now + .seconds(300)
        while apns.receivedCount < before + expected {
            guard ContinuousClock.now < deadline else {
                throw BenchmarkError("\(apns.receivedCount - before) of \(expected) pushes arrived within 300 s")
            }
            try await Task.sleep(for: .milliseconds(2))
        }
        return (apns.received.last?.arrivedAt ?? .now) - start
    }
}

/// Likes at a steady rate, each to the post of an author with one phone, while clients read the Home feed: the time
/// from each like's request to its push.
struct PushLatencyProbe {
    struct Result {
        var pushes = Latencies()
        var likesPerSecond = 0.0
        var feedReadsPerSecond = 0.0
    }

    /// What the likes' and the readers' tasks record.
    private final class Tally: Sendable {
        /// When each like (post, liker's token) was sent.
        let sent = Mutex<[String: ContinuousClock.Instant]>([:])
        let feedReads = Atomic<Int>(0)
    }

    let server: BenchServer
    let crowd: PushCrowd
    let rate: Int
    let seconds: Int

    /// Likes posts of authors with `phones` phones each (0: the same load, pushing nothing).
    func run(at apns: LocalAPNs, feedReaders: Int, phones: Int) async throws -> Result {
        let likes = rate * seconds
        // Enough likers and authors that every like is a new one: up to 100 authors, each liked by as many.
        let authorCount = min(100, max(1, likes / 10))
        let likerCount = (likes + authorCount - 1) / authorCount
        printProgress("signing up \(authorCount) authors with \(phones) phones each and \(likerCount) likers")
        let authors = try await PushCrowd(server: server, authors: authorCount, phones: phones)
        let likers = try await crowd.signUp(likerCount, as: "latency-liker-\(phones)-")
        let tally = Tally()
        let before = apns.receivedCount
        let start = ContinuousClock.now
        let reading = Task {
            await withTaskGroup(of: Void.self) { group in
                for reader in 0..<feedReaders {
                    group.addTask {
                        while !Task.isCancelled {
                            let token = likers[reader % likers.count]
                            if (try? await server.request("GET", "/v1/feed/home?limit=20", token: token).status) == 200
                            {
                                tally.feedReads.add(1, ordering: .relaxed)
                            }
                        }
                    }
                }
            }
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<likes {
                let due = start + .nanoseconds(Int64(index) * 1_000_000_000 / Int64(rate))
                if index >= 64 { try await group.next() }
                let liker = likers[index / authorCount]
                let post = authors.authors[index % authorCount].post
                group.addTask {
                    try await Task.sleep(until: due, clock: .continuous)
                    tally.sent.withLock { $0[post + "/" + liker] = .now }
                    let (status, _) = try await server.request("PUT", "/v1/posts/\(post)/like", token: liker)
                    guard status == 200 else { throw BenchmarkError("a like answered \(status)") }
                }
            }
            try await group.waitForAll()
        }
        let likesEnded = ContinuousClock.now
        reading.cancel()
        await reading.value
        var result = Result()
        result.likesPerSecond = Double(likes) / (likesEnded - start).seconds
        result.feedReadsPerSecond = Double(tally.feedReads.load(ordering: .relaxed)) / (likesEnded - start).seconds
        guard phones > 0 else { return result }
        let phones = Set(authors.tokens)
        let deadline = ContinuousClock.now + .seconds(120)
        while apns.receivedCount < before + likes {
            guard ContinuousClock.now < deadline else { throw BenchmarkError("not every like's push arrived") }
            try await Task.sleep(for: .milliseconds(10))
        }
        // A like's push names its post and the liker's id; the liker's token is matched through the post's order.
        let likerIDs = try await likerIDs(likers)
        let times = tally.sent.withLock { $0 }
        for push in apns.received[before...] where phones.contains(push.token) {
            let chorus = push.payload["chorus"] as? [String: Any]
            guard let post = chorus?["postId"] as? String, let user = chorus?["userId"] as? String,
                let liker = likerIDs[user], let sentAt = times[post + "/" + liker]
            else { continue }
            result.pushes.add(max(.zero, push.arrivedAt - sentAt))
        }
        return result
    }

    /// Each liker's user id → their token.
    private func likerIDs(_ likers: [String]) async throws -> [String: String] {
        var ids: [String: String] = [:]
        for liker in likers {
            let (_, me) = try await server.request("GET", "/v1/me", token: liker)
            if let id = me["id"] as? String { ids[id] = liker }
        }
        return ids
    }
}
