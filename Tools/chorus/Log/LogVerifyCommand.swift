import ArgumentParser
import ChorusBackend
import ChorusDomain
import ChorusEventText
import ChorusLMDBLog
import ChorusLog
import Foundation

struct LogVerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check the whole log: checksums, positions, stream versions, every event, and the decision state.",
        discussion: """
            Checks every record's checksum and layout, that positions run from 1 without a gap, that each stream's \
            versions do, that the stream and command indexes match the events, that every event decodes, and that \
            the decision state stored beside the log (e-mails, users, posts, reposts, comments, follows, likes, \
            sessions) equals the log folded up again (a state an older Chorus wrote is recomputed when a server \
            next opens the log, and is not compared). Reads only, so it may run beside a server. Exits 1 at the \
            first problem, naming its position.
            """
    )

    @OptionGroup var data: DataDirectoryOption
    @OptionGroup var output: JSONOutputOption

    mutating func run() async throws {
        let directory = try data.existing()
        let log = try directory.openLog(readOnly: true)
        defer { log.close() }

        let integrity = try log.verifyIntegrity()
        if let problem = integrity.firstProblem {
            fail(position: problem.position, problem.message)
        }
        let keys = try directory.openKeys(preloaded: true)
        defer { keys.close() }
        var audit = DecisionStateAudit(log: log, keys: keys)
        let progress = WorkProgress(
            "folding the log into the decision state", total: Int(integrity.head.rawValue), unit: "events")
        let state: DecisionStateAudit.Report
        do {
            state = try audit.run { folded, head in progress.update(Int(folded.rawValue), of: Int(head.rawValue)) }
            progress.finish(state.mismatch == nil)
        } catch let error as DomainEventDecodingError {
            progress.finish(false)
            fail(position: error.position, "does not decode: \(error.reason)")
        }
        if let mismatch = state.mismatch {
            fail(position: mismatch.position, mismatch.description)
        }
        let stateSummary =
            if let older = state.olderFormat {
                "decision state in the format \(older) of an older Chorus, not compared: it is recomputed from the log "
                    + "when a server next opens it"
            } else {
                "decision state matches the log at position \(state.head) (\(state.entries) entries)"
            }
        var object: [String: Any] = [
            "sound": true, "events": integrity.eventCount, "streams": integrity.streamCount,
            "head": integrity.head.rawValue, "stateCheckedAt": state.head.rawValue, "stateEntries": state.entries,
        ]
        if let older = state.olderFormat { object["stateOlderFormat"] = Int(older) }
        output.emit(
            "log sound: \(integrity.eventCount) events in \(integrity.streamCount) streams, positions 1…\(integrity.head); "
                + stateSummary, object)
    }

    /// Reports the first problem and exits 1. The problem may quote the log (an unknown event type from an imported
    /// file), so its text is escaped for the terminal.
    private func fail(position: LogPosition?, _ message: String) -> Never {
        var object: [String: Any] = ["sound": false, "problem": message]
        if let position { object["position"] = position.rawValue }
        output.emit(
            "log NOT sound: " + (position.map { "position \($0): " } ?? "") + TerminalText.escaped(message), object)
        Self.exit(withError: ExitCode(1))
    }
}
