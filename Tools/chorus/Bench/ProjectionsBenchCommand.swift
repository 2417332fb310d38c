import ArgumentParser
import ChorusBackend
import ChorusDemo
import ChorusDomain
import ChorusFixtures
import ChorusLog
import ChorusProcesses
import ChorusProjections
import ChorusStorage
import Foundation

struct ProjectionsBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "projections",
        abstract: "Full rebuilds of every read model from demo logs of N and 2N events.",
        discussion: """
            Each rebuild runs in a child process of its own, which reports its time and its peak anonymous memory; \
            rss_ratio_2x divides the peak of the 2N rebuild by that of the N rebuild.
            """
    )

    @OptionGroup var output: BenchOutputOptions

    @Option(help: "Events in the smaller demo log (the larger has twice as many).")
    var events = 1_000_000

    @Option(help: "The seed of the demo workload.")
    var seed: UInt64 = 1

    mutating func run() async throws {
        #if DEBUG
        printProgress("warning: this is a debug build; benchmark with `swift run -c release chorus bench projections`")
        #endif
        guard events >= 100 else { throw ValidationError("--events must be at least 100") }
        let workDirectory = try BenchWorkDirectory(parent: output.workDirectory)
        defer { workDirectory.remove() }
        printProgress("working in \(workDirectory.path)")

        var results: [RebuildFigures] = []
        for (index, size) in [events, events * 2].enumerated() {
            let data = DataDirectory(workDirectory.path + "/data-\(index)")
            printProgress("writing a demo log of \(size) events")
            try await writeDemoLog(into: data, events: size)
            printProgress("rebuilding its read models in a child process")
            results.append(try await rebuildInChild(data))
        }

        var report = BenchmarkReport(suite: "projections")
        let small = results[0]
        report.add("events", Double(small.events))
        report.add("rebuild_events_per_s", Double(small.events) / small.seconds, target: .atLeast(250_000))
        report.add("feed_entries_per_s", Double(small.feedEntries) / small.seconds, target: .atLeast(300_000))
        report.add("peak_rss_mb", small.peakAnonymousMegabytes)
        report.add(
            "rss_ratio_2x", results[1].peakAnonymousMegabytes / small.peakAnonymousMegabytes, target: .atMost(1.25))
        report.add("rebuild_2x_events_per_s", Double(results[1].events) / results[1].seconds)
        print(report.table)
        if output.json { print(report.jsonLine) }
    }

    private func writeDemoLog(into data: DataDirectory, events: Int) async throws {
        let log = try data.openLog()
        defer { log.close() }
        var reporter = ProgressLines(total: events, unit: "events")
        let keys = try data.openKeys(durable: false)
        defer { keys.close() }
        let executor = CommandExecutor(
            log: log, keys: keys, media: NoMediaCatalog(), passwordHasher: PasswordHasher(cost: 4))
        _ = try await log.withWriter {
            try await DemoWorkload(seed: seed, events: events).run(on: executor) { reporter.update($0) }
        }
        try keys.sync()
        try log.syncToDisk()
    }

    private func rebuildInChild(_ data: DataDirectory) async throws -> RebuildFigures {
        let worker = try await ChildProcess.run(
            Executables.current.path,
            ["bench", "rebuild-worker", "--data", data.root])
        guard worker.status == 0 else {
            throw BenchmarkError("the rebuild worker exited with status \(worker.status): \(worker.errors)")
        }
        return try JSONDecoder().decode(RebuildFigures.self, from: Data(worker.output.utf8))
    }
}

/// What one rebuild measured.
struct RebuildFigures: Codable {
    var events: UInt64
    var seconds: Double
    var feedEntries: Int
    var peakAnonymousMegabytes: Double
}

/// `chorus bench rebuild-worker`: one measured rebuild, for `chorus bench projections` to run as a child process.
struct RebuildWorkerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rebuild-worker", abstract: "One measured rebuild (used by `chorus bench projections`).",
        shouldDisplay: false)

    @Option var data: String

    func run() throws {
        let layout = DataDirectory(data)
        let log = try layout.openLog(readOnly: true)
        defer { log.close() }
        let sampler = MemorySampler()
        let clock = ContinuousClock()
        let started = clock.now
        let keys = try layout.openKeys()
        defer { keys.close() }
        let position = try ProjectionEngine.rebuild(log: log, keys: keys, into: layout.projections)
        let seconds = (clock.now - started).seconds
        let peak = sampler.stop()
        let store = try KeyValueStore(directory: layout.projections, tables: ProjectionEngine.tables)
        defer { store.close() }
        let feedEntries = try ProjectionEngine.feedEntryCount(in: store)
        let figures = RebuildFigures(
            events: position.rawValue, seconds: seconds, feedEntries: feedEntries, peakAnonymousMegabytes: peak)
        print(String(decoding: try JSONEncoder().encode(figures), as: UTF8.self))
    }
}

/// Demo data uploads no media.
struct NoMediaCatalog: MediaCatalog {
    func contains(_ media: MediaID, uploadedBy user: UserID) -> Bool { false }
}
