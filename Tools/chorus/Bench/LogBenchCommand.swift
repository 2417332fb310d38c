import ArgumentParser
import ChorusLog
import Foundation

struct LogBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log",
        abstract: "Durable appends against raw LMDB, group commit with many writers, bulk import, and scans.",
        discussion: """
            Raw LMDB and the single writer run in alternating rounds in this one process, so that their ratio \
            compares like with like on a noisy machine.
            """
    )

    @OptionGroup var output: BenchOutputOptions

    @Option(help: "Durable single-event commits, for raw LMDB and for the single writer each.")
    var commits = 4_000

    @Option(help: "Concurrent writers for the group-commit figure.")
    var writers = 64

    @Option(help: "Events appended by the concurrent writers, in all.")
    var concurrentEvents = 200_000

    @Option(help: "Events bulk-imported, then scanned.")
    var bulkEvents = 1_000_000

    @Option(help: "Payload bytes per event.")
    var payloadBytes = 200

    mutating func run() async throws {
        #if DEBUG
        printProgress("warning: this is a debug build; benchmark with `swift run -c release chorus bench log`")
        #endif
        guard commits >= 20, writers >= 1, concurrentEvents >= writers, bulkEvents >= 1, payloadBytes >= 0 else {
            throw ValidationError("sizes must be positive, with at least 20 commits and one event per writer")
        }
        let workDirectory = try BenchWorkDirectory(parent: output.workDirectory)
        defer { workDirectory.remove() }
        printProgress("working in \(workDirectory.path)")
        let benchmark = LogBenchmark(
            workDirectory: workDirectory.path, commits: commits, writers: writers,
            concurrentEvents: concurrentEvents, bulkEvents: bulkEvents, payloadBytes: payloadBytes)
        let report = try await benchmark.run(progress: printProgress)
        print(report.table)
        if output.json { print(report.jsonLine) }
    }
}

/// Progress goes to standard error, so that standard output is the table and the JSON line alone.
/// A fresh directory for one benchmark run, removed afterwards.
struct BenchWorkDirectory {
    let path: String

    init(parent: String?) throws {
        let base = parent.map { URL(fileURLWithPath: $0) } ?? FileManager.default.temporaryDirectory
        path = base.appendingPathComponent("chorus-bench-\(UUID().uuidString.lowercased())").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}
