import ArgumentParser
import ChorusBackend
import ChorusEventText
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
        // Opened and written in place, as the shell's `>` would: a device or a pipe stays what it is.
        let destination = try output.map(Self.create) ?? STDOUT_FILENO
        defer { if output != nil { close(destination) } }
        do {
            try export(log, through: last, to: destination)
        } catch {
            // A partial export is not one: no file is left to be mistaken for the whole log.
            if let output, Self.isRegularFile(destination) { unlink(output) }
            throw error
        }
    }

    /// Writes the events `from…last` as lines to `destination`, a megabyte at a time, and syncs a file.
    private func export(_ log: any EventLog, through last: LogPosition, to destination: Int32) throws {
        let doing = "cannot write the export to \(output ?? "standard output")"
        let total = Int(last.rawValue - min(last.rawValue, from - 1))
        let progress = WorkProgress("exporting", total: total, unit: "events", allowsBar: output != nil)
        var pending = JSONBytes()
        var written = 0
        try log.scan(from: LogPosition(from), through: last) { event in
            ExportedEvent.appendLine(event, to: &pending)
            pending.literal("\n")
            written += 1
            if pending.bytes.count >= 1 << 20 {
                try writeOut(pending.bytes, to: destination, doing: doing)
                pending.removeAll()
                progress.update(written)
            }
        }
        try writeOut(pending.bytes, to: destination, doing: doing)
        if output != nil, Self.isRegularFile(destination), fsync(destination) != 0 {
            throw OperatorError.system(doing)
        }
        progress.update(written)
        progress.finish()
        printProgress("exported \(written) events, positions \(from)…\(last)")
    }

    private static func create(_ path: String) throws -> Int32 {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw OperatorError.system("cannot create \(path)") }
        return descriptor
    }

    private static func isRegularFile(_ descriptor: Int32) -> Bool {
        var status = stat()
        return fstat(descriptor, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG
    }
}
