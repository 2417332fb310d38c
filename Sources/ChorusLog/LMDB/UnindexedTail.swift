/// What the log has appended since its indexes were last written: the writer decides expected versions and command
/// retries against this plus the indexes on disk, and writes it to the indexes in one sorted batch now and then.
///
/// Only the fsync'd event records make appends durable; this is rebuilt from them when the log opens.
struct UnindexedTail {
    /// One stream-index entry still to be written.
    struct IndexEntry {
        let stream: StreamID
        let version: UInt64
        let position: LogPosition
    }

    /// The last version of every stream appended to since the index checkpoint.
    private(set) var streamVersions: [StreamID: UInt64] = [:]
    /// In position order.
    private(set) var indexEntries: [IndexEntry] = []
    /// What each command appended since the index checkpoint.
    private(set) var commands: [CommandID: AppendOutcome] = [:]

    var eventCount: Int { indexEntries.count }
    /// The streams appended to, each of which the index write touches in its own place.
    var streamCount: Int { streamVersions.count }
    var isEmpty: Bool { indexEntries.isEmpty }

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
        commands[command] = outcome
    }

    /// Records one stored event, when rebuilding the tail from the log; events come in position order.
    mutating func record(_ event: RecordedEvent, commandStartsAt start: LogPosition? = nil) {
        indexEntries.append(IndexEntry(stream: event.stream, version: event.streamVersion, position: event.position))
        streamVersions[event.stream] = event.streamVersion
        let first = commands[event.commandID]?.firstPosition ?? start ?? event.position
        commands[event.commandID] = AppendOutcome(
            firstPosition: first, lastPosition: event.position, streamVersion: event.streamVersion, isReplay: true)
    }

    /// Adds a committed batch's appends, which come after everything already here.
    mutating func append(contentsOf later: UnindexedTail) {
        // Just after an index write (after every batch of an import): taken whole, without hashing every id again.
        guard !isEmpty else {
            self = later
            return
        }
        indexEntries.append(contentsOf: later.indexEntries)
        streamVersions.merge(later.streamVersions) { _, later in later }
        commands.merge(later.commands) { _, later in later }
    }

    mutating func removeAll() {
        streamVersions.removeAll(keepingCapacity: true)
        indexEntries.removeAll(keepingCapacity: true)
        commands.removeAll(keepingCapacity: true)
    }
}
