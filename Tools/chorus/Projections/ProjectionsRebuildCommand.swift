import ArgumentParser
import ChorusBackend
import ChorusLMDBLog
import ChorusLog
import ChorusProjections
import Foundation

struct ProjectionsRebuildCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rebuild",
        abstract: "Rebuild the read models from the log: offline on a stopped data directory, or online on a server.",
        discussion: """
            Offline (--data): the data directory's server must be stopped. The new read models are built beside \
            the old ones and swapped in with one atomic rename. Online (--server URL, CHORUS_ADMIN_TOKEN): asks \
            the server to build new read models beside the ones it serves, catch them up with the live log and \
            swap them in, without stopping reads or writes; follows its progress until it ends.
            """
    )

    @OptionGroup var data: DataDirectoryOption
    @OptionGroup var server: ServerOption
    @OptionGroup var output: JSONOutputOption

    mutating func run() async throws {
        let clock = ContinuousClock()
        let started = clock.now
        if let admin = try server.adminClient() {
            try await rebuildOnline(admin, started: started)
            return
        }
        let directory = try data.existing()
        let log: LMDBEventLog
        do {
            log = try directory.openLog()
        } catch let error as EventLogError where error.code == .locked {
            throw OperatorError(
                "a server has \(directory.root) open; stop it, or rebuild online: chorus projections rebuild --server URL"
            )
        }
        defer { log.close() }
        let progress = WorkProgress("rebuilding the read models", total: Int(log.head.rawValue), unit: "events")
        let keys = try directory.openKeys(preloaded: true)
        defer { keys.close() }
        let position = try ProjectionGenerations(dataDirectory: directory.root).rebuildAndSwap(log: log, keys: keys) {
            replayed, total in
            progress.update(replayed, of: total)
        }
        progress.finish()
        let seconds = (clock.now - started).seconds
        output.emit(
            "rebuilt the read models of \(directory.root) through position \(position) in "
                + "\(String(format: "%.1f", seconds)) s (\(Int(Double(position.rawValue) / max(seconds, 0.001))) events/s)",
            ["rebuilt": true, "position": position.rawValue, "seconds": seconds, "online": false])
    }

    private func rebuildOnline(_ admin: AdminClient, started: ContinuousClock.Instant) async throws {
        try await admin.startRebuild()
        let progress = WorkProgress("rebuilding the read models online", total: 0, unit: "events")
        var status: [String: Any] = [:]
        while true {
            status = try await admin.projections().first ?? [:]
            guard status["state"] as? String == "rebuilding" else { break }
            if let counts = status["rebuildProgress"] as? [String: Any] {
                progress.update(counts["replayed"] as? Int ?? 0, of: counts["total"] as? Int ?? 0)
            }
            try await Task.sleep(for: .milliseconds(250))
        }
        let last = status["lastRebuild"] as? [String: Any] ?? [:]
        guard last["outcome"] as? String == "finished", let position = last["position"] as? Int else {
            progress.finish(false)
            throw OperatorError(
                "the online rebuild failed: \(last["error"] as? String ?? "the server did not say why")")
        }
        progress.finish()
        let seconds = (ContinuousClock.now - started).seconds
        output.emit(
            "rebuilt the read models of \(admin.http.base) online; swapped in at position \(position) after "
                + "\(String(format: "%.1f", seconds)) s",
            ["rebuilt": true, "position": position, "seconds": seconds, "online": true])
    }
}
