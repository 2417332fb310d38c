import ArgumentParser
import ChorusBackend
import ChorusDomain
import ChorusLog
import ChorusProjections
import Foundation

struct DeleteBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Deleting a post that sits in many followers' feeds, against posting it.",
        discussion: """
            One author with --followers followers (each following a few others too) writes --history posts, then \
            posts and deletes in rounds. Each figure is the time from executing the command (a durable append) until \
            the read models have applied it: for a post, its fan-out into every follower's feed; for a deletion, its \
            removal from every feed, tab and counter. The oldest posts of the history are deleted too: a Following \
            feed is stored in chunks, and taking out an old position rewrites every chunk after it. \
            delete_to_post_ratio divides the median deletion of a new post by the median post, measured in the same \
            run.
            """
    )

    @OptionGroup var output: BenchOutputOptions

    @Option(help: "Followers of the author whose posts are deleted.")
    var followers = 10_000

    @Option(help: "Posts the author has written before the rounds (the oldest are deleted too).")
    var history = 300

    @Option(help: "Rounds of one post and its deletion, and deletions of old posts.")
    var rounds = 20

    mutating func run() async throws {
        #if DEBUG
        printProgress("warning: this is a debug build; benchmark with `swift run -c release chorus bench delete`")
        #endif
        guard followers >= 1, rounds >= 1, history >= rounds else {
            throw ValidationError("--followers and --rounds must be positive, and --history at least --rounds")
        }
        let workDirectory = try BenchWorkDirectory(parent: output.workDirectory)
        defer { workDirectory.remove() }
        let data = DataDirectory(workDirectory.path + "/data")
        let log = try data.openLog()
        defer { log.close() }
        let keys = try data.openKeys()
        defer { keys.close() }
        let executor = CommandExecutor(
            log: log, keys: keys, media: NoMediaCatalog(), passwordHasher: PasswordHasher(cost: 4))
        // Every post fanned out, whatever the author's followers: this measures the feeds' writes.
        let engine = try ProjectionEngine(
            log: log, keys: keys, directory: data.projections, fanOutLimit: Int.max,
            fanOutPostLimit: Int.max)
        defer { engine.close() }
        let (followers, history, rounds) = (self.followers, self.history, self.rounds)

        let figures = try await log.withWriter {
            printProgress("registering the author and \(followers) followers")
            let setup = try await BenchGraph.make(followers: followers, history: history, on: executor)
            try engine.catchUp()
            printProgress("\(rounds) rounds of posting and deleting")
            /// Milliseconds from executing `command` until the read models have applied it.
            func timed(_ command: Command) async throws -> (Double, CommandResult) {
                let started = ContinuousClock.now
                let result = try await executor.execute(command)
                try engine.catchUp()
                return ((ContinuousClock.now - started).seconds * 1000, result)
            }
            var posting: [Double] = []
            var deletingNew: [Double] = []
            var deletingOld: [Double] = []
            for round in 0..<rounds {
                let (post, created) = try await timed(.createPost(author: setup.author, text: "round \(round)"))
                posting.append(post)
                let id = PostID(unchecked: created.createdID ?? "")
                deletingNew.append(try await timed(.deletePost(author: setup.author, post: id)).0)
                deletingOld.append(try await timed(.deletePost(author: setup.author, post: setup.posts[round])).0)
            }
            return (posting, deletingNew, deletingOld)
        }

        var report = BenchmarkReport(suite: "delete")
        report.add("followers", Double(followers))
        report.add("post_fanout_ms_p50", figures.0.median)
        report.add("delete_new_post_ms_p50", figures.1.median)
        report.add("delete_old_post_ms_p50", figures.2.median)
        report.add("delete_new_post_ms_max", figures.1.max() ?? 0)
        report.add("delete_to_post_ratio", figures.1.median / figures.0.median)
        report.add("feed_entries_removed_per_s", Double(followers + 1) / (figures.1.median / 1000))
        print(report.table)
        if output.json { print(report.jsonLine) }
    }
}

/// An author, followers who follow it and a few others, and the author's earlier posts.
struct BenchGraph {
    let author: UserID
    /// The author's posts, oldest first.
    let posts: [PostID]

    static func make(followers: Int, history: Int, on executor: CommandExecutor) async throws -> BenchGraph {
        @Sendable func created(_ command: Command) async throws -> String {
            try await executor.execute(command, durability: .nonDurableBulkImport).createdID ?? ""
        }
        let author = UserID(
            unchecked: try await created(
                .registerUser(email: "author@bench.chorus", password: "password", name: "Author")))
        let others = try await inWaves(0..<followers) { index in
            UserID(
                unchecked: try await created(
                    .registerUser(email: "f\(index)@bench.chorus", password: "password", name: "F\(index)")))
        }
        _ = try await inWaves(others.indices) { index in
            _ = try await created(.follow(follower: others[index], followee: author))
            // A few others each, so that feeds hold more than the author's posts.
            for step in 1...3 {
                _ = try await created(
                    .follow(follower: others[index], followee: others[(index + step * 7) % others.count]))
            }
            _ = try await created(.createPost(author: others[index], text: "hello from \(index)"))
        }
        var posts: [PostID] = []
        for index in 0..<history {
            posts.append(PostID(unchecked: try await created(.createPost(author: author, text: "post \(index)"))))
        }
        return BenchGraph(author: author, posts: posts)
    }

    /// Runs `body` for every index, 256 at a time; the results in index order.
    private static func inWaves<T: Sendable>(
        _ indices: Range<Int>, _ body: @escaping @Sendable (Int) async throws -> T
    ) async throws -> [T] {
        var results: [T] = []
        for start in stride(from: indices.lowerBound, to: indices.upperBound, by: 256) {
            let wave = start..<min(start + 256, indices.upperBound)
            results += try await withThrowingTaskGroup(of: (Int, T).self) { group in
                for index in wave { group.addTask { (index, try await body(index)) } }
                var done: [(Int, T)] = []
                for try await result in group { done.append(result) }
                return done.sorted { $0.0 < $1.0 }.map(\.1)
            }
        }
        return results
    }
}
