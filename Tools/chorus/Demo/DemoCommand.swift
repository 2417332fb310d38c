import ArgumentParser
import ChorusBackend
import ChorusDataKeys
import ChorusDemo
import ChorusDomain
import ChorusLMDBLog
import ChorusLog
import ChorusProjections
import Foundation

struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Fill a data directory with a synthetic social network, then build its read models.",
        discussion: """
            Users with Korean and Latin names, a heavy-tailed follower graph, posts (some with up to four \
            generated photos and their alt texts), reposts, likes, comments, messages and profile edits, written \
            through the real command path (bulk import). The same seed gives the same content. Every demo user's password is "password".
            """
    )

    @Option(help: "The data directory (its log must be empty).")
    var data = "./chorus-data"

    @Option(help: "About how many events to write.")
    var events = 100_000

    @Option(help: "The seed of the workload.")
    var seed: UInt64 = 1

    @Option(
        help: ArgumentHelp(
            "The follower graph: modest or zipf.",
            discussion: """
                modest: one user per 40 events, each following 2 to 8 others, a few accounts followed by thousands. \
                zipf: one user per 8 events, the first three accounts followed by over 80 % of users, the next by \
                fewer with the square of their rank (at 1,000,000 events, three accounts with over 100,000 followers).
                """))
    var graph = FollowerGraph.modest

    mutating func run() async throws {
        guard events > 0 else { throw ValidationError("--events must be positive") }
        let layout = DataDirectory(data)
        let log = try layout.openLog()
        defer { log.close() }
        guard log.head == .start else {
            throw ValidationError(
                "\(layout.log) already holds \(log.head) events; give `chorus demo` an empty data directory")
        }
        let clock = ContinuousClock()
        let started = clock.now
        let summary = try await Self.writeDemo(into: layout, log: log, events: events, seed: seed, graph: graph)
        let written = clock.now - started
        printProgress("building the read models")
        var building = ProgressLines(total: summary.events, unit: "events")
        let keys = try layout.openKeys()
        defer { keys.close() }
        let built = try ProjectionGenerations(dataDirectory: layout.root).rebuildAndSwap(log: log, keys: keys) {
            replayed, total in
            building.update(replayed, of: total)
        }
        print(
            "wrote \(summary.events) events (\(summary.users) users, \(summary.posts) posts) to \(layout.log) in "
                + "\(String(format: "%.1f", written.seconds)) s; read models built through position \(built) in "
                + "\(layout.projections)")
        let top = try Self.mostFollowed(3, log: log, keys: keys, layout: layout)
        print("most followed: " + top.map { "\($0.followers) followers" }.joined(separator: ", "))
    }

    /// The followers of the `count` most followed users, most first.
    private static func mostFollowed(_ count: Int, log: LMDBEventLog, keys: DataKeyStore, layout: DataDirectory) throws
        -> [(user: UserID, followers: UInt64)]
    {
        let engine = try ProjectionEngine(log: log, keys: keys, directory: layout.projections)
        defer { engine.close() }
        return try engine.snapshot { view in
            try view.listUsers(caller: nil, page: PageRequest(limit: count)).items.map { summary in
                (summary.id, try view.profile(summary.id, viewer: nil)?.followers ?? 0)
            }
        }.answer
    }
}

extension DemoCommand {
    /// Writes the demo workload into `log` through the command path, in bulk, with progress lines; syncs at the end.
    /// Demo users' passwords are hashed at bcrypt's lowest cost, so that thousands of sign-ups take seconds.
    static func writeDemo(
        into data: DataDirectory, log: LMDBEventLog, events: Int, seed: UInt64, graph: FollowerGraph = .modest
    ) async throws -> DemoWorkload.Summary {
        var reporter = ProgressLines(total: events, unit: "events")
        let keys = try data.openKeys(durable: false)
        defer { keys.close() }
        let media = try MediaStore(directory: data.media, keys: keys)
        let executor = CommandExecutor(log: log, keys: keys, media: media, passwordHasher: PasswordHasher(cost: 4))
        let workload = DemoWorkload(seed: seed, events: events, graph: graph) { owner, picture in
            // Through the image pipeline, as an app's upload goes.
            let upload = try media.beginUpload(owner: owner)
            try picture.png().withUnsafeBytes { try upload.append($0) }
            return try await upload.finish(declared: .png).id
        }
        let summary = try await log.withWriter {
            try await workload.run(on: executor) { reporter.update($0) }
        }
        // The keys first: a synced log must never name a user whose key was lost.
        try keys.sync()
        try log.syncToDisk()
        return summary
    }
}

extension FollowerGraph: ExpressibleByArgument {}
