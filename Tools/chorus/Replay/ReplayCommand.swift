import ArgumentParser
import ChorusBackend
import ChorusDomain
import ChorusEventText
import ChorusLog
import ChorusProjections
import ChorusStorage
import ChorusText
import Foundation
import Synchronization

struct ReplayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Print the log's events, decoded, filtered; or build the read models as of a past position.",
        discussion: """
            Prints one event per line (with --json, a JSON object: the envelope, and the decoded fields under \
            "data"), oldest first, filtered by position (--from, --to), time (--since, --until, ISO 8601), type, \
            stream and user (the actor, or a user the event names). --follow keeps printing events as they are \
            appended, until interrupted. Reads only, so it may run beside a server.

            Time travel: --to P --into DIR2 copies the log through position P into the new data directory DIR2 \
            (with the media and session key), and builds its read models as of P. `chorus serve --data DIR2 \
            --read-only` then serves that past state: every write answers 403.
            """
    )

    @OptionGroup var data: DataDirectoryOption
    @OptionGroup var output: JSONOutputOption

    @Option(help: "The first position.")
    var from: UInt64 = 1

    @Option(help: "The last position.")
    var to: UInt64?

    @Option(help: "Only events recorded at or after this time (ISO 8601, such as 2026-11-22T09:00:00Z).")
    var since: String?

    @Option(help: "Only events recorded before this time (ISO 8601).")
    var until: String?

    @Option(help: "Only events of this type (such as PostCreated); repeat for several.")
    var type: [String] = []

    @Option(help: "Only events of this stream (such as post-01m8…); repeat for several.")
    var stream: [String] = []

    @Option(help: "Only events by this user (the actor) or naming them, by user id.")
    var user: String?

    @Flag(help: "After the last event, keep printing new ones as they are appended.")
    var follow = false

    @Option(help: "Build the read models as of --to (default: the head) into this new data directory instead.")
    var into: String?

    mutating func run() async throws {
        guard from > 0 else { throw ValidationError("--from must be at least 1") }
        let filter = try ReplayFilter(
            types: Set(type), streams: Set(stream), user: user,
            since: since.map { try Self.time($0, option: "since") },
            until: until.map { try Self.time($0, option: "until") })
        let directory = try data.existing()
        let log = try directory.openLog(readOnly: true)
        defer { log.close() }
        if let into {
            guard filter.isEmpty, from == 1, !follow else {
                throw ValidationError(
                    "--into builds every event through --to; it takes no other filter, --from or --follow")
            }
            try await TimeTravel(source: directory, log: log, through: to.map { LogPosition($0) } ?? log.head)
                .build(into: into, output: output)
            return
        }
        // A replay of the whole log meets nearly every user: their keys are read at once rather than one by one.
        let keys = try directory.openKeys(preloaded: from == 1 && to == nil)
        defer { keys.close() }
        var printer = EventPrinter(log: log, json: output.json, filter: filter, keys: keys)
        var next = LogPosition(from)
        while true {
            let head = log.head
            let last = min(to.map { LogPosition($0) } ?? head, head)
            while next <= last {
                let end = LogPosition(min(last.rawValue, next.rawValue + UInt64(EventPrinter.batchSize) - 1))
                try printer.print(next...end)
                next = end.next
            }
            try printer.flush()
            if !follow || (to.map { next.rawValue > $0 } ?? false) { return }
            try await Task.sleep(for: .milliseconds(200))
        }
    }

    private static func time(_ text: String, option: String) throws -> EventTime {
        guard let time = Timestamps.parse(text) else {
            throw ValidationError("--\(option) must be an ISO 8601 time such as 2026-11-22T09:00:00Z, not \(text)")
        }
        return time
    }
}

/// Lines on standard output, written a block at a time. The events are read from the log, decoded and formatted on
/// every core, a chunk of positions at a time, and written in log order: decoding opens the sealed personal fields,
/// and with the formatting it is most of a replay's work. Each thread reads its own chunks (LMDB's readers run side by
/// side), so that events are made, used and freed on one thread: read on one thread and formatted on others, they
/// were copied into a batch, and freed on another thread than the one that made them. A batch is formatted while
/// the one before it is written.
struct EventPrinter {
    static let batchSize = 8_192

    let log: any EventLog
    let json: Bool
    let filter: ReplayFilter
    let keys: any PersonalDataKeys
    private let threads = max(1, min(8, ProcessInfo.processInfo.activeProcessorCount))
    private var pending: [UInt8] = []
    /// The batch being formatted, if any: its lines are ready once its group is done.
    private var formatting: (group: DispatchGroup, lines: FormattedChunks)?

    init(log: any EventLog, json: Bool, filter: ReplayFilter, keys: any PersonalDataKeys) {
        self.log = log
        self.json = json
        self.filter = filter
        self.keys = keys
    }

    /// Starts formatting the events at `positions` that the filter admits, after the batches before it; ``flush()``
    /// writes whatever is left. A failure to read the log is thrown once the lines before it are written.
    mutating func print(_ positions: ClosedRange<LogPosition>) throws {
        let lines = FormattedChunks(positions: positions)
        let group = DispatchGroup()
        let (log, json, filter, keys) = (self.log, self.json, self.filter, self.keys)
        for _ in 0..<min(threads, lines.count) {
            // A thread of its own for each core: Dispatch's global queue here grew from one thread to two only after
            // the first second of a replay (its pool adds threads on a timer while the reading thread is busy).
            group.enter()
            Thread {
                defer { group.leave() }
                while let (chunk, range) = lines.next() {
                    var bytes: [UInt8] = []
                    bytes.reserveCapacity(Int(range.upperBound.rawValue - range.lowerBound.rawValue + 1) * 512)
                    do {
                        try log.scan(from: range.lowerBound, through: range.upperBound) { event in
                            guard filter.admitsEnvelope(of: event) else { return }
                            let replayed = ReplayedEvent(decoding: event, keys: keys, namingUsers: filter.user != nil)
                            guard filter.admits(event, replayed) else { return }
                            if json {
                                replayed.appendJSON(of: event, to: &bytes)
                            } else {
                                bytes.append(contentsOf: replayed.text(of: event).utf8)
                            }
                            bytes.append(UInt8(ascii: "\n"))
                        }
                        lines.set(chunk, bytes)
                    } catch {
                        lines.set(chunk, bytes, failure: error)
                    }
                }
            }.start()
        }
        let previous = formatting
        formatting = (group, lines)
        do {
            try collect(previous)
        } catch {
            // The batch just started reads the log and the keys: it ends before the error leaves (and the caller
            // closes them).
            group.wait()
            formatting = nil
            throw error
        }
    }

    /// Waits for the batch being formatted, and writes every line printed so far.
    mutating func flush() throws {
        let last = formatting
        formatting = nil
        try collect(last)
        try write(&pending)
    }

    /// Waits for a batch being formatted and takes its lines, in order after those before them: a whole chunk's
    /// lines are written as they are, smaller blocks (the last lines, or a few new ones under `--follow`) gathered.
    private mutating func collect(_ batch: (group: DispatchGroup, lines: FormattedChunks)?) throws {
        guard let (group, lines) = batch else { return }
        group.wait()
        for (var chunk, failure) in lines.all() {
            if chunk.count >= Self.writeSize {
                try write(&pending)
                try write(&chunk)
            } else {
                pending.append(contentsOf: chunk)
            }
            if let failure {
                try write(&pending)
                throw failure
            }
        }
        if pending.count >= Self.writeSize { try write(&pending) }
    }

    private static let writeSize = 1 << 16

    /// Writes `bytes` to standard output, and empties them.
    private func write(_ bytes: inout [UInt8]) throws {
        try writeOut(bytes, to: STDOUT_FILENO, doing: "cannot write the events to standard output")
        bytes.removeAll(keepingCapacity: true)
    }
}

/// The lines of one batch, formatted a chunk of positions at a time, a block of lines for each chunk. Threads take
/// the next chunk as they finish one: with a half of the batch each, one thread sat idle while the other finished its
/// half (one half may hold more sealed events than the other); a replay kept 1.89 cores busy instead of 1.84.
private final class FormattedChunks: Sendable {
    static let chunkSize: UInt64 = 512

    /// How many chunks the batch has.
    let count: Int
    private let positions: ClosedRange<LogPosition>
    private let taken = Atomic<Int>(0)
    /// Each chunk's lines, and the failure that ended it early, if one did.
    private let blocks: Mutex<[(lines: [UInt8], failure: (any Error)?)]>

    init(positions: ClosedRange<LogPosition>) {
        self.positions = positions
        let events = positions.upperBound.rawValue - positions.lowerBound.rawValue + 1
        count = Int((events + Self.chunkSize - 1) / Self.chunkSize)
        blocks = Mutex(Array(repeating: ([], nil), count: count))
    }

    /// The next chunk no thread has taken, and the positions it covers; nil once every one is taken.
    func next() -> (chunk: Int, positions: ClosedRange<LogPosition>)? {
        let chunk = taken.add(1, ordering: .relaxed).oldValue
        guard chunk < count else { return nil }
        let first = positions.lowerBound.rawValue + UInt64(chunk) * Self.chunkSize
        let last = min(positions.upperBound.rawValue, first + Self.chunkSize - 1)
        return (chunk, LogPosition(first)...LogPosition(last))
    }

    func set(_ chunk: Int, _ lines: [UInt8], failure: (any Error)? = nil) {
        blocks.withLock { $0[chunk] = (lines, failure) }
    }

    /// Every chunk's block, in chunk order.
    func all() -> [(lines: [UInt8], failure: (any Error)?)] { blocks.withLock { $0 } }
}
