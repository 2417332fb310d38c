import ArgumentParser
import ChorusBackend
import ChorusLog
import Foundation

struct LogExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write the log as JSON lines, one event per line, every field of its record (payload in base64).",
        discussion: """
            Lossless: `chorus log import` reads it back into a log whose export is the same bytes. For reading \
            events, `chorus replay` prints them decoded. Reads only, so it may run beside a server; exports \
            through the head as it is when it starts (or --to).
            """
    )

    @OptionGroup var data: DataDirectoryOption

    @Option(help: "The first position to export.")
    var from: UInt64 = 1

    @Option(help: "The last position to export (default: the head when the export starts).")
    var to: UInt64?

    @Option(name: .shortAndLong, help: "The file to write (default: standard output).")
    var output: String?

    mutating func run() async throws {
        guard from > 0 else { throw ValidationError("--from must be at least 1") }
        let directory = try data.existing()
        let log = try directory.openLog(readOnly: true)
        defer { log.close() }
        let last = LogPosition(min(to ?? log.head.rawValue, log.head.rawValue))
        let destination: FileHandle
        if let output {
            guard FileManager.default.createFile(atPath: output, contents: nil) else {
                throw OperatorError("cannot create \(output)")
            }
            destination = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        } else {
            destination = .standardOutput
        }
        let total = Int(last.rawValue - min(last.rawValue, from - 1))
        let progress = WorkProgress("exporting", total: total, unit: "events", allowsBar: output != nil)
        var pending = JSONBytes()
        var written = 0
        try log.scan(from: LogPosition(from), through: last) { event in
            ExportedEvent.appendLine(event, to: &pending)
            pending.literal("\n")
            written += 1
            if pending.bytes.count >= 1 << 20 {
                try destination.write(contentsOf: pending.bytes)
                pending.removeAll()
                progress.update(written)
            }
        }
        try destination.write(contentsOf: pending.bytes)
        if output != nil { try destination.synchronize() }
        progress.update(written)
        progress.finish()
        printProgress("exported \(written) events, positions \(from)…\(last)")
    }
}
