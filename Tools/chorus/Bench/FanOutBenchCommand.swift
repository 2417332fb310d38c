import ArgumentParser
import ChorusBackend
import ChorusDataKeys
import ChorusDemo
import ChorusDomain
import ChorusLMDBLog
import ChorusLog
import ChorusProjections
import Foundation

/// `chorus bench fanout`: what fan-out on write costs the read models per follower, and what merging held-back posts
/// costs a feed read per merged author, in one run on one zipf demo log: the two sides of `--fan-out-limit`.
struct FanOutBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fanout",
        abstract: "The cost of fan-out on write per follower against that of merging at read time per author.",
        discussion: """
            Writes a zipf demo log (`chorus demo --graph zipf`) and builds its read models twice: every post fanned \
            out (no limit), and hybrid (--fan-out-limit). The most followed account then posts, and each engine's \
            time to apply each post is taken: write_us_per_feed_entry is the fanned-out time per feed written. Then \
            a sample of users reads the first page of its Following feed from each engine, in process: \
            read_us_per_merge is the hybrid page's extra time per author it merges. stall_ms_at_limit is how long \
            one post of an author just below the limit holds the read models up. Last, an account makes \
            --prolific-posts posts and one of those users follows and unfollows it: follow_ms and unfollow_ms are \
            the time until each engine has applied the follow (or unfollow) and answered the user's first page.
            """
    )

    @OptionGroup var output: BenchOutputOptions

    @Option(help: "Events in the zipf demo log.")
    var events = 200_000

    @Option(help: "The hybrid engine's fan-out limit.")
    var fanOutLimit = ProjectionEngine.defaultFanOutLimit

    @Option(help: "Posts the most followed account makes, each timed.")
    var posts = 20

    @Option(help: "Users whose feeds are read.")
    var readers = 2_000

    @Option(help: "Posts of the account one of them follows and unfollows.")
    var prolificPosts = 100_000

    @Option(help: "Times they follow and unfollow it, each timed.")
    var rounds = 3

    mutating func run() async throws {
        #if DEBUG
        printProgress("warning: this is a debug build; benchmark with `swift run -c release chorus bench fanout`")
        #endif
        guard events >= 1_000, fanOutLimit >= 1, posts > 0, readers > 0, prolificPosts > 0, rounds > 0 else {
            throw ValidationError(
                "--events must be at least 1000; --fan-out-limit, --posts, --readers, --prolific-posts and --rounds "
                    + "positive")
        }
        let workDirectory = try BenchWorkDirectory(parent: output.workDirectory)
        defer { workDirectory.remove() }
        printProgress("working in \(workDirectory.path); writing a zipf demo log of \(events) events")
        let data = DataDirectory(workDirectory.path + "/data")
        let demoLog = try data.openLog()
        _ = try await DemoCommand.writeDemo(into: data, log: demoLog, events: events, seed: 1, graph: .zipf)
        // A log runs its writer once.
        demoLog.close()
        let log = try data.openLog()
        defer { log.close() }
        let keys = try data.openKeys()
        defer { keys.close() }

        printProgress("building the read models twice: every post fanned out, and hybrid")
        let fanned = try ProjectionEngine(
            log: log, keys: keys, directory: workDirectory.path + "/fanned", durable: false, fanOutLimit: Int.max,
            fanOutPostLimit: Int.max)
        defer { fanned.close() }
        let hybrid = try ProjectionEngine(
            log: log, keys: keys, directory: workDirectory.path + "/hybrid", durable: false, fanOutLimit: fanOutLimit)
        defer { hybrid.close() }
        try fanned.catchUp()
        try hybrid.catchUp()

        let (star, followers) = try fanned.snapshot { view in
            let top = try view.listUsers(caller: nil, page: PageRequest(limit: 1)).items[0].id
            return (top, try view.profile(top, viewer: nil)?.followers ?? 0)
        }.answer
        let sample = try Self.users(in: log, keys: keys, every: max(1, userCount(log) / readers))
        printProgress("the most followed account (\(followers) followers) posts \(posts) times")
        let executor = CommandExecutor(
            log: log, keys: keys, media: NoMediaCatalog(), passwordHasher: PasswordHasher(cost: 4))
        let (fannedSeconds, hybridSeconds, follows, unfollows) = try await measureWrites(
            by: star, reader: sample[sample.count / 2], on: executor, log: log, fanned: fanned, hybrid: hybrid)

        printProgress("reading the first feed page of \(sample.count) users from each engine")
        let merges = try hybrid.snapshot { view in try sample.map { try view.mergedFeedAuthorCount(of: $0) } }.answer
        let fannedRead = try Self.bestReadSeconds(of: sample, in: fanned)
        let hybridRead = try Self.bestReadSeconds(of: sample, in: hybrid)

        let entryMicroseconds = median(fannedSeconds) * 1e6 / Double(followers + 1)
        let mergesPerRead = Double(merges.reduce(0, +)) / Double(sample.count)
        let fannedPage = fannedRead * 1e6 / Double(sample.count)
        let hybridPage = hybridRead * 1e6 / Double(sample.count)
        var report = BenchmarkReport(suite: "fanout")
        report.add("events", Double(events))
        report.add("fan_out_limit", Double(fanOutLimit))
        report.add("top_followers", Double(followers))
        report.add("write_ms_per_post_fanned_out", median(fannedSeconds) * 1e3)
        report.add("write_ms_per_post_held_back", median(hybridSeconds) * 1e3)
        report.add("write_us_per_feed_entry", entryMicroseconds)
        report.add("stall_ms_at_limit", entryMicroseconds * Double(fanOutLimit) / 1e3)
        report.add("read_us_per_page_fanned_out", fannedPage)
        report.add("read_us_per_page_hybrid", hybridPage)
        report.add("merges_per_read", mergesPerRead)
        report.add("read_us_per_merge", mergesPerRead > 0 ? (hybridPage - fannedPage) / mergesPerRead : 0)
        report.add("prolific_posts", Double(prolificPosts))
        report.add("follow_ms_fanned_out", median(follows.fanned) * 1e3)
        report.add("follow_ms_hybrid", median(follows.hybrid) * 1e3, target: .atMost(50))
        report.add("unfollow_ms_fanned_out", median(unfollows.fanned) * 1e3)
        report.add("unfollow_ms_hybrid", median(unfollows.hybrid) * 1e3, target: .atMost(50))
        print(report.table)
        if output.json { print(report.jsonLine) }
    }

    /// Times each engine's catch-up after every post of `star`'s, then a read of `reader`'s feed after each follow and
    /// unfollow of a prolific account.
    private func measureWrites(
        by star: UserID, reader: UserID, on executor: CommandExecutor, log: LMDBEventLog, fanned: ProjectionEngine,
        hybrid: ProjectionEngine
    ) async throws -> (
        fanned: [Double], hybrid: [Double], follows: (fanned: [Double], hybrid: [Double]),
        unfollows: (fanned: [Double], hybrid: [Double])
    ) {
        var fannedSeconds: [Double] = []
        var hybridSeconds: [Double] = []
        var follows = (fanned: [Double](), hybrid: [Double]())
        var unfollows = (fanned: [Double](), hybrid: [Double]())
        try await log.withWriter {
            for index in 0..<posts {
                _ = try await executor.execute(.createPost(author: star, caption: nil, text: "post \(index)"))
                fannedSeconds.append(try Self.timed { try fanned.catchUp() })
                hybridSeconds.append(try Self.timed { try hybrid.catchUp() })
            }
            printProgress("an account makes \(prolificPosts) posts; a user follows and unfollows it \(rounds) times")
            let prolific = try await Self.prolificAccount(posts: prolificPosts, on: executor)
            try fanned.catchUp()
            try hybrid.catchUp()
            for _ in 0..<rounds {
                _ = try await executor.execute(.follow(follower: reader, followee: prolific))
                follows.fanned.append(try Self.timedRead(of: reader, in: fanned))
                follows.hybrid.append(try Self.timedRead(of: reader, in: hybrid))
                _ = try await executor.execute(.unfollow(follower: reader, followee: prolific))
                unfollows.fanned.append(try Self.timedRead(of: reader, in: fanned))
                unfollows.hybrid.append(try Self.timedRead(of: reader, in: hybrid))
            }
        }
        return (fannedSeconds, hybridSeconds, follows, unfollows)
    }

    /// The number of users, from the log's sign-ups.
    private func userCount(_ log: LMDBEventLog) throws -> Int {
        var count = 0
        try log.scan { if $0.type == "UserRegistered" { count += 1 } }
        return count
    }

    /// Every `step`-th user signed up.
    private static func users(in log: LMDBEventLog, keys: DataKeyStore, every step: Int) throws -> [UserID] {
        var users: [UserID] = []
        var index = 0
        try log.scan { record in
            guard record.type == "UserRegistered" else { return }
            defer { index += 1 }
            guard index % step == 0, case .userRegistered(let event) = try DomainEvent(decoding: record, keys: keys)
            else { return }
            users.append(event.user)
        }
        return users
    }

    /// A new account with `posts` posts.
    private static func prolificAccount(posts: Int, on executor: CommandExecutor) async throws -> UserID {
        let registered = try await executor.execute(
            .registerUser(email: "prolific@bench.chorus", password: "password", name: "Prolific"),
            durability: .nonDurableBulkImport)
        let author = UserID(unchecked: registered.createdID ?? "")
        for start in stride(from: 0, to: posts, by: 256) {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in start..<min(start + 256, posts) {
                    group.addTask {
                        _ = try await executor.execute(
                            .createPost(author: author, caption: nil, text: "post \(index)"),
                            durability: .nonDurableBulkImport)
                    }
                }
                try await group.waitForAll()
            }
        }
        return author
    }

    /// Seconds until `engine` has applied the log and answered `reader`'s first Following-feed page.
    private static func timedRead(of reader: UserID, in engine: ProjectionEngine) throws -> Double {
        try timed {
            try engine.catchUp()
            _ = try engine.snapshot { try $0.followingFeed(of: reader, page: PageRequest()).items.count }
        }
    }

    /// The best of three rounds of reading each user's first Following-feed page, in seconds.
    private static func bestReadSeconds(of users: [UserID], in engine: ProjectionEngine) throws -> Double {
        var best = Double.infinity
        for _ in 0..<3 {
            let seconds = try timed {
                _ = try engine.snapshot { view in
                    var posts = 0
                    for user in users { posts += try view.followingFeed(of: user, page: PageRequest()).items.count }
                    return posts
                }
            }
            best = min(best, seconds)
        }
        return best
    }

    private static func timed(_ body: () throws -> Void) rethrows -> Double {
        let clock = ContinuousClock()
        let started = clock.now
        try body()
        return (clock.now - started).seconds
    }
}

private func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
