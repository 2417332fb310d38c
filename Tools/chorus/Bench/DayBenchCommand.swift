import ArgumentParser
import ChorusBackend
import ChorusDemo
import ChorusProjections
import Foundation

/// `chorus bench day`: a whole day of a social app's traffic on one machine, at rising post rates, on a heavy-tailed
/// follower graph, until the server saturates.
struct DayBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "day",
        abstract:
            "A mixed load at rising post rates on a zipf graph: posts, feed reads, likes, comments, follows, live.",
        discussion: """
            Writes a demo log with the zipf follower graph (a few accounts followed by most users, most by few), \
            starts `chorus serve` on it and signs in --users demo users, who are the authors and the readers. \
            --streams of them keep live streams of their feed and notifications open throughout. Then, for each of \
            --post-rates in turn (an equal share of --minutes each), all at once: wrk posts at that rate as random \
            users; a second wrk reads Following feeds as fast as the server answers; a third likes, unlikes, \
            comments, follows and unfollows at that rate too; a probe user who follows authors on both sides of the \
            fan-out limit times each probe post from sending it to its arrival on the probe's live feed; /health is \
            sampled for the projection lag. The first rate the server does not keep up with (posts below 90 % of \
            it) ends the run. The figures are those of the rate at which the most posts went through with none \
            refused and the read models never 10,000 events behind (sustained). The moonshot to report against is \
            Twitter's 2012 average: 4,600 posts/s while serving 20,000 feed reads/s at p99 ≤ 10 ms.
            """
    )

    @OptionGroup var output: BenchOutputOptions

    @Option(help: "Events in the demo log (one user per 8 events).")
    var events = 100_000

    @Option(help: "Minutes of load in all, shared equally by the post rates (each gets at least 5 s).")
    var minutes = 5.0

    @Option(
        help: "Posts per second to try, in rising order, comma separated.",
        transform: { text in
            try text.split(separator: ",").map { part in
                guard let rate = Int(part.trimmingCharacters(in: .whitespaces)), rate > 0 else {
                    throw ValidationError("--post-rates takes positive whole numbers, such as 500,1000,2000")
                }
                return rate
            }
        })
    var postRates = [100, 250, 500, 1_000, 2_000, 4_600]

    @Option(help: "Demo users signed in: the authors, readers and likers.")
    var users = 2_000

    @Option(help: "Connections reading Following feeds as fast as the server answers.")
    var readers = 32

    @Option(help: "Live streams (feed and notifications) of signed-in users kept open.")
    var streams = 200

    @Option(help: "The server's --fan-out-limit: followers from which on an author's posts are merged when read.")
    var fanOutLimit = ProjectionEngine.defaultFanOutLimit
    /// Demo users after the signed-in ones: the probe follower, then the accounts the load follows and unfollows.
    private static let probeAndFollowed = 21

    mutating func run() async throws {
        #if DEBUG
        printProgress("warning: this is a debug build; benchmark with `swift run -c release chorus bench day`")
        #endif
        guard events >= 1_000, minutes > 0, !postRates.isEmpty, users >= 20, readers > 0, streams >= 0,
            streams <= users, fanOutLimit > 0
        else {
            throw ValidationError(
                "--events must be at least 1000, --users at least 20, --streams at most --users; sizes positive")
        }
        guard postRates == postRates.sorted() else { throw ValidationError("--post-rates must rise") }
        let wrk = try Wrk.locateOrInstall()
        let command = self
        let report = try await BenchServer.withDemo(
            events: events, users: 0, more: users + Self.probeAndFollowed, graph: .zipf,
            // The limits on what users write hold: a day of the app's traffic never meets them. Only the logins of
            // every user from this one address would.
            serverArguments: ["--rate-limit", "login-per-address=off", "--fan-out-limit", String(fanOutLimit)],
            under: output.workDirectory
        ) { server, _ in try await command.day(server, wrk) }
        print(report.table)
        if output.json { print(report.jsonLine) }
    }

    /// What one post rate gave.
    private struct Stage {
        var target: Int
        var posts: Wrk.Result
        var reads: Wrk.Result
        var social: Wrk.Result
        var delivery: FeedDeliveryProbe.Figures
        var lagMax: Int
        var liveEvents: Int

        /// Every post went through, and the read models kept up.
        /// Of the feed pages asked for, the share answered as kept (``--kept-pages``).
        let pagesReused: Double
        var sustained: Bool { posts.errors == 0 && lagMax < 10_000 }
        /// The posts went through at about the rate asked for.
        var keptUp: Bool { sustained && posts.requestsPerSecond >= 0.9 * Double(target) }
    }

    private func day(_ server: BenchServer, _ wrk: Wrk) async throws -> BenchmarkReport {
        printProgress("signing in \(users) demo users")
        var signedIn: [(user: String, token: String, followers: Int)] = []
        for index in 0..<(users + Self.probeAndFollowed) {
            let session = try await server.logInWithProfile(email: "user\(index)@demo.chorus", password: "password")
            signedIn.append((session.user, session.token, session.profile["followers"] as? Int ?? 0))
        }
        let authors = Array(signedIn.prefix(users))
        let tokens = authors.map(\.token)

        let probe = try await makeProbe(server, signedIn)
        defer { probe.close() }
        let socialRequests = try await socialRequests(server, token: tokens[0], followed: signedIn.suffix(20))
        printProgress("opening \(streams) live streams")
        let port = Int(server.base.split(separator: ":").last ?? "") ?? 0
        let crowd = try LiveStreamCrowd(port: port, topics: "feed,notifications", tokens: Array(tokens.prefix(streams)))
        defer { crowd.close() }

        let seconds = max(5, Int(minutes * 60) / postRates.count)
        var stages: [Stage] = []
        var probeNumber = 0
        print(
            "posts/s asked  posts/s  social/s  feed reads/s  read p99 ms  post→feed p99 ms (held back)  lag max  live events"
        )
        for target in postRates {
            printProgress("\(target) posts/s for \(seconds) s, with feed reads, likes, comments and follows")
            let liveBefore = crowd.events
            let pagesBefore = await Self.pageCounts(of: server)
            let deadline = ContinuousClock.now + .seconds(seconds)
            async let posts = wrk.runAlongside(
                url: server.base,
                script: Self.pacedScript(tokens, [(1, "POST", "/v1/posts", #"{"text":"a day post"}"#)], rate: target),
                seconds: seconds, connections: Self.pacedConnections(rate: target))
            async let social = wrk.runAlongside(
                url: server.base, script: Self.pacedScript(tokens, socialRequests, rate: target), seconds: seconds,
                connections: Self.pacedConnections(rate: target))
            async let reads = wrk.runAlongside(
                url: server.base + "/v1/feed/following", script: Wrk.script(method: "GET", tokens: tokens),
                seconds: seconds, connections: readers)
            async let lag = Self.maxLag(of: server, until: deadline)
            let delivery = try await probe.measure(from: probeNumber, every: .milliseconds(100), until: deadline)
            probeNumber = delivery.next
            let (posted, read, wrote, lagMax) = (try await posts, try await reads, try await social, await lag)
            let pagesAfter = await Self.pageCounts(of: server)
            let (reused, rendered) = (
                pagesAfter.reused - pagesBefore.reused, pagesAfter.rendered - pagesBefore.rendered
            )
            let stage = Stage(
                target: target, posts: posted, reads: read, social: wrote, delivery: delivery.figures, lagMax: lagMax,
                liveEvents: crowd.events - liveBefore, pagesReused: reused / max(1, reused + rendered))
            stages.append(stage)
            print(
                String(
                    format: "%13d  %7.0f  %8.0f  %12.0f  %11.2f  %13.2f (%.2f)  %14d  %11d", target,
                    stage.posts.requestsPerSecond, stage.social.requestsPerSecond, stage.reads.requestsPerSecond,
                    stage.reads.p99Milliseconds, stage.delivery.all.percentile(0.99),
                    stage.delivery.heldBack.percentile(0.99), stage.lagMax, stage.liveEvents))
            guard stage.keptUp else { break }
        }
        return report(
            stages, followers: authors.map(\.followers), seconds: seconds,
            rateLimitedAnswers: await Self.rateLimitedAnswers(of: server))
    }

    /// The figures of a day: the workload's, then those of the best stage the server sustained.
    private func report(_ stages: [Stage], followers: [Int], seconds: Int, rateLimitedAnswers: Double)
        -> BenchmarkReport
    {
        let best = stages.filter(\.sustained).max { $0.posts.requestsPerSecond < $1.posts.requestsPerSecond }
        var report = BenchmarkReport(suite: "day")
        report.add("events", Double(events))
        report.add("authors", Double(users))
        report.add("top_followers", Double(followers.max() ?? 0))
        // wrk draws each post's author at random: the effective fan-out is the authors' mean.
        report.add("followers_per_post", Double(followers.reduce(0, +)) / Double(users))
        report.add(
            "feed_entries_per_post",
            Double(followers.map { $0 < fanOutLimit ? $0 + 1 : 0 }.reduce(0, +)) / Double(users))
        report.add("stage_seconds", Double(seconds))
        report.add("posts_per_s", best?.posts.requestsPerSecond ?? 0, target: .atLeast(4_600))
        report.add("feed_reads_per_s", best?.reads.requestsPerSecond ?? 0, target: .atLeast(20_000))
        report.add("feed_read_p99_ms", best?.reads.p99Milliseconds ?? .nan, target: .atMost(10))
        report.add("social_writes_per_s", best?.social.requestsPerSecond ?? 0)
        // Answers of a limit, on users' writes above all: a day of the app's traffic meets none.
        report.add("rate_limited_answers", rateLimitedAnswers, target: .atMost(0))
        report.add("post_to_feed_p99_ms", best?.delivery.all.percentile(0.99) ?? .nan)
        report.add("held_back_post_to_feed_p99_ms", best?.delivery.heldBack.percentile(0.99) ?? .nan)
        report.add("probe_posts", Double(best?.delivery.all.count ?? 0))
        report.add("probe_posts_lost", Double(best?.delivery.lost ?? 0))
        report.add("projection_lag_max", Double(best?.lagMax ?? 0))
        report.add("feed_pages_reused_share", best?.pagesReused ?? 0)
        report.add("live_streams", Double(streams))
        report.add("live_events_per_s", Double(best?.liveEvents ?? 0) / Double(seconds))
        report.add("posts_per_s_asked", Double(best?.target ?? 0))
        report.add("saturated_at_posts_per_s", Double(stages.first { !$0.keptUp }?.target ?? 0))
        return report
    }

    /// A user who follows authors on both sides of the fan-out limit, watching their live feed.
    private func makeProbe(_ server: BenchServer, _ signedIn: [(user: String, token: String, followers: Int)])
        async throws -> FeedDeliveryProbe
    {
        let follower = signedIn[users]
        // The most followed account and the ones about a tenth and a hundredth as followed, and a little-known one.
        let picks = Set([0, 9, 30, users - 1]).sorted().map { signedIn[$0] }
        var authors: [FeedDeliveryProbe.Author] = []
        for author in picks {
            let (status, _) = try await server.request("PUT", "/v1/users/\(author.user)/follow", token: follower.token)
            guard status == 200 else { continue }  // blocked by the demo: not a follower
            authors.append(.init(user: author.user, token: author.token, heldBack: author.followers >= fanOutLimit))
        }
        guard !authors.isEmpty else { throw BenchmarkError("the probe user could follow none of the authors") }
        printProgress(
            "probe: user\(users) follows authors with \(picks.map { String($0.followers) }.joined(separator: ", ")) "
                + "followers")
        return try FeedDeliveryProbe(server: server, follower: (follower.user, follower.token), authors: authors)
    }

    /// Likes and unlikes of recent posts, comments on them, and follows and unfollows of `followed`, in the
    /// proportions 2 : 1 : 1.
    private func socialRequests(
        _ server: BenchServer, token: String, followed: ArraySlice<(user: String, token: String, followers: Int)>
    ) async throws -> [(weight: Int, method: String, path: String, body: String?)] {
        let home = try await server.request("GET", "/v1/feed/home?limit=100", token: token)
        let posts = (home.body["items"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        guard posts.count >= 20 else { throw BenchmarkError("the demo log has too few posts to like") }
        var requests: [(weight: Int, method: String, path: String, body: String?)] = []
        for post in posts {
            requests.append((1, "PUT", "/v1/posts/\(post)/like", nil))
            requests.append((1, "DELETE", "/v1/posts/\(post)/like", nil))
            requests.append((1, "POST", "/v1/posts/\(post)/comments", #"{"text":"so true"}"#))
        }
        for user in followed {
            requests.append((5, "PUT", "/v1/users/\(user.user)/follow", nil))
            requests.append((5, "DELETE", "/v1/users/\(user.user)/follow", nil))
        }
        return requests
    }

    /// Connections enough that each waits about 500 ms between requests at `rate`: far longer than an answer takes
    /// while the server keeps up (the feed readers keep it busy, so answers queue for tens of milliseconds), so that
    /// the rate is the one asked for.
    private static func pacedConnections(rate: Int) -> Int { max(4, rate / 2) }

    private static func pacedScript(
        _ tokens: [String], _ requests: [(weight: Int, method: String, path: String, body: String?)], rate: Int
    ) -> String {
        let pause = Duration.seconds(Double(pacedConnections(rate: rate)) / Double(rate))
        return Wrk.mixedScript(tokens: tokens, requests: requests, pause: pause)
    }

    /// The server's count of requests answered `429` (`chorus_http_requests_total`), over every route.
    private static func rateLimitedAnswers(of server: BenchServer) async -> Double {
        let metrics = (try? await server.metrics()) ?? ""
        return MetricsText.sum(of: "chorus_http_requests_total", labeled: [#"status="429""#], in: metrics)
    }

    /// The server's count of pages answered as kept, and read from the read models (`chorus_pages_total`).
    private static func pageCounts(of server: BenchServer) async -> (reused: Double, rendered: Double) {
        let metrics = (try? await server.metrics()) ?? ""
        func count(_ result: String) -> Double {
            MetricsText.sum(of: "chorus_pages_total", labeled: [#"result="\#(result)""#], in: metrics)
        }
        return (count("reused"), count("rendered"))
    }

    /// The most the read models fell behind the log's head, sampling `/health` every 50 ms until `deadline`.
    private static func maxLag(of server: BenchServer, until deadline: ContinuousClock.Instant) async -> Int {
        var most = 0
        while ContinuousClock.now < deadline {
            if let health = try? await server.health(),
                let head = health["position"] as? Int,
                let applied = (health["projections"] as? [String: Any])?["readModels"] as? Int
            {
                most = max(most, head - applied)
            }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return most
    }
}
