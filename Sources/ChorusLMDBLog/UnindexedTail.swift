import ChorusLog

/// What the log has appended since its indexes were last written: the writer decides expected versions and command
/// retries against this plus the indexes on disk, and writes it to the indexes in one sorted batch now and then.
///
/// A write transaction's appends are recorded here as they are staged, and undone (``rollBack(to:)``) if it does not
/// commit: recording them apart and merging them in after the commit hashed every stream and command id twice.
///
/// Only the fsync'd event records make appends durable; this is rebuilt from them when the log opens.
struct UnindexedTail: Sendable {
    /// One stream-index entry still to be written.
    struct IndexEntry: Sendable {
        let stream: StreamID
        let version: UInt64
        let position: LogPosition
    }

    /// The last version of every stream appended to since the index checkpoint.
    private(set) var streamVersions: [StreamID: UInt64] = [:]
    /// In position order.
    private(set) var indexEntries: [IndexEntry] = []
    /// What each command appended since the index checkpoint, in the order the commands came (UUIDv7 ids: nearly
    /// sorted already, which the index write's sort finds cheap), and where each is in that list.
    private(set) var commands: [(id: CommandID, outcome: AppendOutcome)] = []
    private var commandIndex: [CommandID: Int] = [:]
    /// Since the last ``mark()``, what recording replaced, in order: for ``rollBack(to:)``.
    private var replacedVersions: [(stream: StreamID, version: UInt64?)] = []
    private var replacedOutcomes: [(index: Int, outcome: AppendOutcome)] = []

    /// How long the tail was when a write transaction began.
    struct Mark {
        fileprivate let indexEntries: Int
        fileprivate let commands: Int
    }

    var eventCount: Int { indexEntries.count }
    /// The streams appended to, each of which the index write touches in its own place.
    var streamCount: Int { streamVersions.count }
    var isEmpty: Bool { indexEntries.isEmpty }

    init() {}

    /// What `command` appended since the index checkpoint, if it appended anything.
    func outcome(ofCommand command: CommandID) -> AppendOutcome? {
        commandIndex[command].map { commands[$0].outcome }
    }

    private mutating func set(_ outcome: AppendOutcome, ofCommand command: CommandID) {
        if let index = commandIndex[command] {
            replacedOutcomes.append((index, commands[index].outcome))
            commands[index].outcome = outcome
        } else {
            commandIndex[command] = commands.count
            commands.append((command, outcome))
        }
    }

    /// Records one append decided by the writer: `outcome` covers `events` consecutive positions of `stream`.
    mutating func record(_ outcome: AppendOutcome, stream: StreamID, command: CommandID) {
        let count = outcome.lastPosition.rawValue - outcome.firstPosition.rawValue + 1
        let firstVersion = outcome.streamVersion - count + 1
        for offset in 0..<count {
            indexEntries.append(
                IndexEntry(
                    stream: stream, version: firstVersion + offset,
                    position: LogPosition(outcome.firstPosition.rawValue + offset)))
        }
        setVersion(outcome.streamVersion, of: stream)
        set(outcome, ofCommand: command)
    }

    private mutating func setVersion(_ version: UInt64, of stream: StreamID) {
        replacedVersions.append((stream, streamVersions.updateValue(version, forKey: stream)))
    }

    /// Records one stored event, when rebuilding the tail from the log; events come in position order.
    mutating func record(_ event: RecordedEvent, commandStartsAt start: LogPosition? = nil) {
        indexEntries.append(IndexEntry(stream: event.stream, version: event.streamVersion, position: event.position))
        setVersion(event.streamVersion, of: event.stream)
        let first = outcome(ofCommand: event.commandID)?.firstPosition ?? start ?? event.position
        set(
            AppendOutcome(
                firstPosition: first, lastPosition: event.position, streamVersion: event.streamVersion,
                isReplay: true),
            ofCommand: event.commandID)
    }

    /// This tail, leaving an empty one in its place: to lend it whole, changed in place by its borrower, not copied.
    mutating func take() -> UnindexedTail {
        var taken = UnindexedTail()
        swap(&taken, &self)
        return taken
    }

    /// Where the tail is now, to roll back to: called as a write transaction begins (one at a time).
    mutating func mark() -> Mark {
        replacedVersions.removeAll(keepingCapacity: true)
        replacedOutcomes.removeAll(keepingCapacity: true)
        return Mark(indexEntries: indexEntries.count, commands: commands.count)
    }

    /// Undoes everything recorded since `mark`, the last ``mark()``: its transaction did not commit.
    mutating func rollBack(to mark: Mark) {
        for (stream, version) in replacedVersions.reversed() { streamVersions[stream] = version }
        for (index, outcome) in replacedOutcomes.reversed() { commands[index].outcome = outcome }
        for command in commands[mark.commands...] { commandIndex[command.id] = nil }
        commands.removeSubrange(mark.commands...)
        indexEntries.removeSubrange(mark.indexEntries...)
        replacedVersions.removeAll(keepingCapacity: true)
        replacedOutcomes.removeAll(keepingCapacity: true)
    }

    mutating func removeAll() {
        streamVersions.removeAll(keepingCapacity: true)
        indexEntries.removeAll(keepingCapacity: true)
        commands.removeAll(keepingCapacity: true)
        commandIndex.removeAll(keepingCapacity: true)
        replacedVersions.removeAll(keepingCapacity: true)
        replacedOutcomes.removeAll(keepingCapacity: true)
    }
}

extension IndexEntries {
    init(_ tail: UnindexedTail) {
        // Every stream has an entry: the entries bound the streams, whatever the tail's versions hold.
        var grouping = Grouping(entries: tail.eventCount, streams: tail.eventCount)
        for entry in tail.indexEntries { grouping.add(entry.stream, version: entry.version, position: entry.position) }
        self = grouping.sorted(commands: tail.commands)
    }
}
