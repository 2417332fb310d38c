import ChorusLMDBLog
import ChorusLog
import ChorusStorage
import Foundation

/// The measurements behind `chorus bench log`.
struct LogBenchmark {
    let workDirectory: String
    let commits: Int
    let writers: Int
    let concurrentEvents: Int
    let bulkEvents: Int
    let payloadBytes: Int

    private static let rounds = 20
    private let clock = ContinuousClock()

    func run(progress: (String) -> Void) async throws -> BenchmarkReport {
        let log = try LMDBEventLog(directory: workDirectory + "/log")
        defer { log.close() }
        let bulkLog = try LMDBEventLog(directory: workDirectory + "/bulk")
        defer { bulkLog.close() }
        return try await log.withWriter {
            try await bulkLog.withWriter { try await measure(log: log, bulkLog: bulkLog, progress: progress) }
        }
    }

    private func measure(log: LMDBEventLog, bulkLog: LMDBEventLog, progress: (String) -> Void) async throws
        -> BenchmarkReport
    {
        progress("raw LMDB and one writer: \(commits) durable commits each, in \(Self.rounds) alternating rounds")
        let raw = try RawLMDBBaseline(directory: workDirectory + "/raw")
        // The same bytes as the log's: a baseline 7 bytes a value longer got neighbouring pages where the log gets
        // separate ones, and a sync of separate pages costs more.
        let sample = request(stream: "single")
        let stored = LMDBEventLog.storedSize(of: sample.events[0], stream: sample.stream, actor: sample.actor)
        var rawTime = Duration.zero
        var singleTime = Duration.zero
        let perRound = commits / Self.rounds
        for _ in 0..<Self.rounds {
            rawTime += try raw.timeDurableCommits(perRound, keySize: stored.key, valueSize: stored.record)
            let start = clock.now
            for _ in 0..<perRound { _ = try await log.append(request(stream: "single")) }
            singleTime += clock.now - start
        }
        let rawPerSecond = Double(perRound * Self.rounds) / rawTime.seconds
        let singlePerSecond = Double(perRound * Self.rounds) / singleTime.seconds
        let singleStatistics = log.statistics

        progress("\(writers) writers: \(concurrentEvents) durable appends")
        let concurrentStart = clock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<writers {
                let count = concurrentEvents / writers + (writer < concurrentEvents % writers ? 1 : 0)
                let stream = try StreamID("writer-\(writer)")
                group.addTask {
                    for _ in 0..<count { _ = try await log.append(request(stream: stream)) }
                }
            }
            try await group.waitForAll()
        }
        let concurrentPerSecond = Double(concurrentEvents) / (clock.now - concurrentStart).seconds
        let statistics = log.statistics
        let concurrentCommits = statistics.commits - singleStatistics.commits
        let concurrentCommitTime = (statistics.commitTime - singleStatistics.commitTime).seconds

        progress("bulk import: \(bulkEvents) events, then a decoding scan of them")
        let bulkStreams = try (0..<1_000).map { try StreamID("bulk-\($0)") }
        let bulkStart = clock.now
        var imported = 0
        while imported < bulkEvents {
            let chunk = min(1_000, bulkEvents - imported)
            let requests = (0..<chunk).map { index in
                request(stream: bulkStreams[(imported + index) % bulkStreams.count])
            }
            for result in try await bulkLog.appendNonDurableBulkImport(requests) { _ = try result.get() }
            imported += chunk
        }
        try bulkLog.syncToDisk()
        let bulkPerSecond = Double(bulkEvents) / (clock.now - bulkStart).seconds

        let scanStart = clock.now
        var scanned = 0
        var payloadTotal = 0
        try bulkLog.scan { event in
            scanned += 1
            payloadTotal &+= event.payload.count
        }
        let scanPerSecond = Double(scanned) / (clock.now - scanStart).seconds
        guard scanned == bulkEvents else { throw BenchmarkError("scanned \(scanned) of \(bulkEvents) events") }

        var report = BenchmarkReport(suite: "log")
        report.add("raw_lmdb_commits_per_s", rawPerSecond)
        report.add("append_1_writer_per_s", singlePerSecond)
        report.add("ratio_1_writer_to_raw", singlePerSecond / rawPerSecond, target: .atLeast(0.9))
        report.add("append_64_writers_per_s", concurrentPerSecond, target: .atLeast(100_000))
        report.add("speedup_64_to_1", concurrentPerSecond / singlePerSecond, target: .atLeast(20))
        report.add("bulk_import_per_s", bulkPerSecond)
        report.add("scan_decode_per_s", scanPerSecond, target: .atLeast(2_000_000))
        // What the figures above are made of: time per durable commit, and how full the 64 writers' groups were.
        report.add("raw_commit_us", rawTime.seconds / Double(perRound * Self.rounds) * 1e6)
        report.add(
            "append_1_writer_commit_us", singleStatistics.commitTime.seconds / Double(singleStatistics.commits) * 1e6)
        report.add("append_64_writers_commit_us", concurrentCommitTime / Double(max(concurrentCommits, 1)) * 1e6)
        report.add("append_64_writers_events_per_commit", Double(concurrentEvents) / Double(max(concurrentCommits, 1)))
        return report
    }

    private func request(stream: StreamID) -> AppendRequest {
        AppendRequest(
            stream: stream,
            events: [NewEvent(type: "Tick", payload: [UInt8](repeating: 0x61, count: payloadBytes))],
            actor: "bench")
    }
}

struct BenchmarkError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
