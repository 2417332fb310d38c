/// What the log has appended since its indexes were last written: the writer decides expected versions and command
/// retries against this plus the indexes on disk, and writes it to the indexes in one sorted batch now and then.
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
        streamVersions[stream] = outcome.streamVersion
        set(outcome, ofCommand: command)
    }

    /// Records one stored event, when rebuilding the tail from the log; events come in position order.
    mutating func record(_ event: RecordedEvent, commandStartsAt start: LogPosition? = nil) {
        indexEntries.append(IndexEntry(stream: event.stream, version: event.streamVersion, position: event.position))
        streamVersions[event.stream] = event.streamVersion
        let first = outcome(ofCommand: event.commandID)?.firstPosition ?? start ?? event.position
        set(
            AppendOutcome(
                firstPosition: first, lastPosition: event.position, streamVersion: event.streamVersion,
                isReplay: true),
            ofCommand: event.commandID)
    }

    /// Adds a committed batch's appends, which come after everything already here.
    mutating func append(contentsOf later: UnindexedTail) {
        // Just after an index write: taken whole, without hashing every id again.
        guard !isEmpty else {
            self = later
            return
        }
        indexEntries.append(contentsOf: later.indexEntries)
        streamVersions.merge(later.streamVersions) { _, later in later }
        for command in later.commands { set(command.outcome, ofCommand: command.id) }
    }

    mutating func removeAll() {
        streamVersions.removeAll(keepingCapacity: true)
        indexEntries.removeAll(keepingCapacity: true)
        commands.removeAll(keepingCapacity: true)
        commandIndex.removeAll(keepingCapacity: true)
    }
}
