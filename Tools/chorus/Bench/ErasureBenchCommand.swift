import ArgumentParser
import ChorusBackend
import ChorusDomain
import ChorusLog
import ChorusProjections
import Foundation
import Logging
import ServiceLifecycle

struct ErasureBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "erasure",
        abstract: "What deleting an account costs, on a copy of a data directory: the deletion, then its erasure.",
        discussion: """
            Copies the log and data keys of --data (a server may be serving it) into a work directory and builds the \
            read models there from the log, timed: that offline rebuild is the yardstick. Then it serves the copy's \
            backend and deletes the demo's most followed accounts (user0@demo.chorus, user1@…) one at a time, as \
            DELETE /v1/me does. delete_command_ms is the deletion command: its password check, and the one append \
            of the deletions of everything the account wrote and did. erasure_ms runs from the deletion's answer to \
            its ErasureCompleted: the read models apply the deletions (apply_ms, the first part), then the key store \
            and the read models are compacted (the read models copied with LMDB's compacting copy and swapped in \
            online); it includes up to 100 ms of the service's waiting (an erasure delay of 100 ms). \
            erasure_to_rebuild_ratio divides the median erasure by the rebuild, measured in the same run.
            """
    )

    @OptionGroup var output: BenchOutputOptions

    @OptionGroup var data: DataDirectoryOption

    @Option(help: "How many of the demo's most followed accounts to delete, one after another.")
    var accounts = 3

    mutating func run() async throws {
        #if DEBUG
        printProgress("warning: this is a debug build; benchmark with `swift run -c release chorus bench erasure`")
        #endif
        guard accounts >= 1 else { throw ValidationError("--accounts must be positive") }
        let source = try data.existing()
        let workDirectory = try BenchWorkDirectory(parent: output.workDirectory)
        defer { workDirectory.remove() }
        let copy = DataDirectory(workDirectory.path + "/data")
        try FileManager.default.createDirectory(atPath: copy.log, withIntermediateDirectories: true)
        printProgress("copying the log and data keys of \(source.root)")
        let sourceLog = try source.openLog(readOnly: true)
        defer { sourceLog.close() }
        try sourceLog.copyCompacted(to: copy.log)
        _ = try DataDirectoryFiles.copyMediaAndKeys(from: source, to: copy)

        printProgress("rebuilding the read models from the log (the yardstick)")
        let rebuildSeconds = try Self.timed {
            let (log, keys) = (try copy.openLog(), try copy.openKeys())
            defer {
                log.close()
                keys.close()
            }
            try ProjectionGenerations(dataDirectory: copy.root).rebuildAndSwap(log: log, keys: keys)
        }

        var logger = Logger(label: "chorus.bench")
        logger.logLevel = .warning
        let backend = try ChorusBackend(data: copy, erasureDelay: .milliseconds(100), logger: logger)
        let emails = (0..<accounts).map { "user\($0)@demo.chorus" }
        let group = ServiceGroup(services: backend.services(), logger: logger)
        let figures = try await withThrowingTaskGroup(of: [Deletion]?.self) { tasks in
            tasks.addTask {
                try await group.run()
                return nil
            }
            defer { tasks.cancelAll() }
            let figures = try await Self.delete(emails, on: backend)
            await group.triggerGracefulShutdown()
            return figures
        }
        backend.close()

        let erasure = figures.map(\.erasureMilliseconds).median
        var report = BenchmarkReport(suite: "erasure")
        report.add("events", Double(sourceLog.head.rawValue))
        report.add("accounts_deleted", Double(figures.count))
        report.add("events_per_deletion", Double(figures.map(\.events).reduce(0, +)) / Double(figures.count))
        report.add("delete_command_ms_p50", figures.map(\.commandMilliseconds).median)
        report.add("apply_ms_p50", figures.map(\.applyMilliseconds).median)
        report.add("apply_ms_max", figures.map(\.applyMilliseconds).max() ?? 0)
        report.add("erasure_ms_p50", erasure)
        report.add("erasure_ms_max", figures.map(\.erasureMilliseconds).max() ?? 0)
        report.add("rebuild_ms", rebuildSeconds * 1000)
        report.add("erasure_to_rebuild_ratio", erasure / (rebuildSeconds * 1000))
        print(report.table)
        if output.json { print(report.jsonLine) }
    }

    /// One account's deletion: how many events it appended, how long the command took, and how long from its answer
    /// until its erasure was complete.
    struct Deletion: Sendable {
        let events: UInt64
        let commandMilliseconds: Double
        /// From the answer until the read models applied the deletion (part of the erasure).
        let applyMilliseconds: Double
        let erasureMilliseconds: Double
    }

    /// Deletes the account of each of `emails` in turn, each once the one before is erased.
    static func delete(_ emails: [String], on backend: ChorusBackend) async throws -> [Deletion] {
        var deletions: [Deletion] = []
        for email in emails {
            let user = try backend.commands.authenticate(email: email, password: "password")
            printProgress("deleting \(email) (\(user))")
            defer {
                if let last = deletions.last {
                    printProgress(
                        "  \(last.events) events; command \(Int(last.commandMilliseconds)) ms, applied after "
                            + "\(Int(last.applyMilliseconds)) ms, erased after \(Int(last.erasureMilliseconds)) ms")
                }
            }
            let head = backend.log.head
            let started = ContinuousClock.now
            let result = try await backend.execute(
                .deleteAccount(user: user, password: "password"), idempotencyKey: nil)
            let answered = ContinuousClock.now
            try await backend.readModels.waitUntilApplied(result.position, timeout: .seconds(3600))
            let applied = ContinuousClock.now
            while try backend.commands.erasures().first(where: { $0.user == user })?.completedAt == nil {
                try await Task.sleep(for: .milliseconds(5))
            }
            deletions.append(
                Deletion(
                    events: result.position.rawValue - head.rawValue,
                    commandMilliseconds: (answered - started).seconds * 1000,
                    applyMilliseconds: (applied - answered).seconds * 1000,
                    erasureMilliseconds: (ContinuousClock.now - answered).seconds * 1000))
        }
        return deletions
    }

    static func timed(_ work: () throws -> Void) rethrows -> Double {
        let started = ContinuousClock.now
        try work()
        return (ContinuousClock.now - started).seconds
    }
}
