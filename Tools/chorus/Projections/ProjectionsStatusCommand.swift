import ArgumentParser
import ChorusBackend
import ChorusLMDBLog
import ChorusLog
import ChorusProjections
import Foundation

struct ProjectionsStatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Position, head, lag and events/s of the read models.",
        discussion: """
            On a data directory (--data): reads the log's head and the read models' position without opening \
            anything for writing, so a server may be running on it; events/s is the position's change over \
            --interval seconds. Of a running server (--server URL, CHORUS_ADMIN_TOKEN): its admin status, with \
            the progress of an online rebuild.
            """
    )

    @OptionGroup var data: DataDirectoryOption
    @OptionGroup var server: ServerOption
    @OptionGroup var output: JSONOutputOption

    @Option(help: "Seconds between the two readings that give events/s on a data directory.")
    var interval = 1.0

    mutating func run() async throws {
        guard interval > 0, interval <= 60 else { throw ValidationError("--interval must be from 0 to 60 seconds") }
        if let admin = try server.adminClient() {
            for projection in try await admin.projections() { print(describe(projection)) }
            return
        }
        let directory = try data.existing()
        let log = try directory.openLog(readOnly: true)
        defer { log.close() }
        let first = try ProjectionEngine.storedPosition(in: directory.projections)
        try await Task.sleep(for: .seconds(interval))
        let position = try ProjectionEngine.storedPosition(in: directory.projections) ?? .start
        let head = log.head
        let lag = head.rawValue - min(head.rawValue, position.rawValue)
        let rate = Double(position.rawValue - min(position.rawValue, (first ?? .start).rawValue)) / interval
        let serving = LMDBEventLog.isOpenForWriting(directory: directory.log)
        output.emit(
            "read models of \(directory.root): position \(position) of \(head), lag \(lag), "
                + "\(Int(rate)) events/s over \(interval) s; "
                + (serving ? "a server has the log open" : "no server has the log open"),
            [
                "name": "readModels", "position": position.rawValue, "head": head.rawValue, "lag": lag,
                "eventsPerSecond": rate, "serving": serving,
            ])
    }

    /// One projection of a server's status, as text or as its JSON line.
    private func describe(_ projection: [String: Any]) -> String {
        guard !output.json else { return JSONLine.encode(projection) }
        let number = { (key: String) in (projection[key] as? NSNumber)?.int64Value ?? 0 }
        var text =
            "\(projection["name"] ?? "?"): \(projection["state"] ?? "?"), position \(number("position")) of "
            + "\(number("head")), lag \(number("lag")), \(number("eventsPerSecond")) events/s"
        if let progress = projection["rebuildProgress"] as? [String: Any] {
            text += "; rebuilding: \(progress["replayed"] ?? 0) of \(progress["total"] ?? 0) events replayed"
        }
        if let last = projection["lastRebuild"] as? [String: Any] {
            text += "; last rebuild \(last["outcome"] ?? "?")"
            if let position = last["position"] { text += " at position \(position)" }
            if let error = last["error"] { text += ": \(error)" }
        }
        return text
    }
}
