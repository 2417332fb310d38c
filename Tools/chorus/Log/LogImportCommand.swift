import ArgumentParser
import ChorusBackend
import ChorusDomain
import ChorusLMDBLog
import ChorusLog
import Foundation

struct LogImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Append the events of a `chorus log export` to a data directory's log, exactly as exported.",
        discussion: """
            Every event is checked before it is appended: its fields, that it decodes as a Chorus event, that \
            positions and stream versions run on without a gap, that no command appears twice, that times never go \
            back. Appends in bulk and syncs at the end; into an empty data directory, the index and the decision \
            state of up to 1,048,576 events are held in memory and written once, at the end. Resumable: events the \
            log already holds (the same ones, at the same positions) are skipped, so after an interruption the same \
            command finishes the import without duplicates. The server must be stopped. Read models are built by \
            the next `chorus serve`, or by `chorus projections rebuild`.
            """
    )

    @OptionGroup var data: DataDirectoryOption
    @OptionGroup var output: JSONOutputOption

    @Argument(help: "The export to read; - reads standard input.")
    var file: String

    @Option(
        help: """
            Events appended per transaction. Three batches are in memory at once (one read, one decoded, one \
            being appended): smaller batches use less memory, larger ones import faster.
            """)
    var batchEvents = ImportBatches.defaultSize

    mutating func validate() throws {
        guard (1...1_000_000).contains(batchEvents) else {
            throw ValidationError("--batch-events must be between 1 and 1,000,000")
        }
    }

    mutating func run() async throws {
        let directory = data.directory
        let log: LMDBEventLog
        do {
            log = try directory.openLog(bulkImport: true)
        } catch let error as EventLogError where error.code == .locked {
            throw OperatorError("a server has \(directory.root) open; stop it before importing")
        }
        defer { log.close() }
        let clock = ContinuousClock()
        let started = clock.now
        let startHead = log.head
        var reader = try LineReader(path: file)
        let size = file == "-" ? 0 : ((try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0)
        let progress = WorkProgress("importing", total: size, unit: "bytes")
        // Sealed personal fields open with the keys of the data directory they were written in: copy its `keys/`.
        let keys = try directory.openKeys()
        defer { keys.close() }
        var batches = ImportBatches(log: log, keys: keys, size: batchEvents)
        var check = ImportCheck(
            lastTime: startHead == .start ? nil : try log.event(at: startHead)?.recordedAt)
        var skipped = 0
        var number = 0
        /// What an append that failed stops the import with: where the log ends now, and how to go on.
        func stopped(by error: any Error) -> OperatorError {
            let through = log.head
            return OperatorError(
                "\(error); the log now ends at position \(through) (\(through.rawValue - startHead.rawValue) events "
                    + "imported); fix the export and run the import again to go on from there")
        }
        try await log.withWriter {
            // Every key read in while the first batches are parsed: read first, it kept the second core idle for about
            // 0.1 s of a million-event import. Batches are decoded once it is done, and `finish` waits for it.
            batches.loadKeys { try keys.preload() }
            /// A line that cannot go in (unreadable, not an event, out of order): everything before it still does.
            var refusedLine: (any Error)?
            while true {
                let event: RecordedEvent
                do {
                    var parsed: RecordedEvent?
                    let more = try reader.next { line in
                        number += 1
                        if !line.isEmpty { parsed = try ExportedEvent.parse(line, number: number) }
                    }
                    guard more else { break }
                    // Moved out, not copied: a copy retained the event's strings and payload, and released them.
                    guard let found = parsed.take() else { continue }
                    if found.position <= startHead {
                        try check.matchesStored(found, in: log, line: number)
                        skipped += 1
                        continue
                    }
                    try check.admit(found, line: number)
                    event = consume found
                } catch {
                    refusedLine = error
                    break
                }
                do { try await batches.add(consume event) } catch { throw stopped(by: error) }
                // Now and then: a clock read for every line is felt in an import.
                if number % 4_096 == 0 { progress.update(reader.bytesRead) }
            }
            do { try await batches.finish() } catch { throw stopped(by: error) }
            progress.update(reader.bytesRead)
            if let refusedLine { throw refusedLine }
        }
        let imported = batches.appended
        try log.syncToDisk()
        progress.finish()
        let seconds = (clock.now - started).seconds
        output.emit(
            "imported \(imported) events into \(directory.log) (\(skipped) already there), now through position "
                + "\(log.head), in \(String(format: "%.1f", seconds)) s",
            ["imported": imported, "skipped": skipped, "head": log.head.rawValue, "seconds": seconds])
    }
}

/// What an import checks across lines: lines the log already holds match it, and times never go back.
struct ImportCheck {
    private var lastTime: EventTime?
    /// Stored events read ahead, for comparing lines the log already holds; `next` is the one to compare next.
    private var stored: [RecordedEvent] = []
    private var next = 0

    /// `lastTime`: when the log's last event was recorded.
    init(lastTime: EventTime?) { self.lastTime = lastTime }

    /// Throws if `event`, to be appended, was recorded before the event before it.
    mutating func admit(_ event: RecordedEvent, line: Int) throws {
        if let lastTime, event.recordedAt < lastTime {
            throw OperatorError("line \(line): position \(event.position) is recorded before the event before it")
        }
        lastTime = event.recordedAt
    }

    /// Throws unless the log holds exactly `event` at its position: a resumed import of the same export.
    mutating func matchesStored(_ event: RecordedEvent, in log: EventLog, line: Int) throws {
        if next >= stored.count || stored[next].position != event.position {
            stored = try log.read(from: event.position, limit: 4_096)
            next = 0
        }
        guard next < stored.count, stored[next] == event else {
            throw OperatorError(
                "line \(line): the log already holds a different event at position \(event.position); import into an "
                    + "empty data directory, or resume with the export this log was imported from")
        }
        next += 1
    }
}
