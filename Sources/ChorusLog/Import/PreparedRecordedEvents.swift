/// Events another log recorded, made ready to append in one go (``DecisionBatch/appendPrepared(_:)``) by the task
/// that has them, before the log's writer gets them: their records encoded, and their index entries grouped and
/// sorted. The writer checks them against the log, and writes the records and the index entries in one transaction:
/// no tail of them is kept in memory to be written later.
///
/// What can be checked without the log is checked here (positions, versions and commands running on within the
/// events, event and actor limits); what needs the log (the first position, each stream's version before, command
/// ids already used) is checked by the writer, before it writes anything.
public struct PreparedRecordedEvents: Sendable {
    package let firstPosition: LogPosition
    package let lastPosition: LogPosition
    /// Each event's record, in order.
    let records: EncodedRecords
    /// The events' index entries, grouped by stream and, unless held, sorted: the writer writes them in the same
    /// transaction as the records.
    package let index: IndexEntries

    public var eventCount: Int { records.count }

    /// Prepares `events`, which come in position order, each command's together; nil when they do not run on as one
    /// log's would, or one would be refused: appended one command at a time instead, the first refused says why.
    /// `records` are the events' records when they were encoded as the events came (an import's, ``EncodedRecords``),
    /// each holding its event's position (nil otherwise); without them they are encoded here. Each event is read in
    /// place, by index: iterated, each was copied (its strings and payload retained and released). `indexInKeyOrder`
    /// false leaves the index entries' streams in the order they came, for a batch whose entries are held
    /// (``HeldImportIndex``), which orders the names of them all once, at its end, rather than each batch's here.
    /// Appended otherwise, they are sorted then.
    public init?(_ events: [RecordedEvent], records: EncodedRecords? = nil, indexInKeyOrder: Bool = true) {
        guard let first = events.first, (records?.count ?? events.count) == events.count else { return nil }
        // Most streams of a batch have a single event.
        var grouping = IndexEntries.Grouping(entries: events.count, streams: events.count)
        var lastGroup = -1
        // In the order they came; a command's events come together, and whether one comes twice is seen once they
        // are sorted (``IndexEntries/runsOn``), without a table of them here.
        var commands: [(id: CommandID, outcome: AppendOutcome)] = []
        var expected = first.position
        let runsOn: Bool = events.withUnsafeBufferPointer { events in
            for offset in events.indices {
                guard events[offset].position == expected else { return false }
                let group = grouping.add(
                    events[offset].stream, version: events[offset].streamVersion, position: events[offset].position)
                defer { lastGroup = group }
                let outcome = AppendOutcome(
                    firstPosition: expected, lastPosition: expected, streamVersion: events[offset].streamVersion,
                    isReplay: true)
                if let command = commands.last, command.id == events[offset].commandID {
                    guard group == lastGroup else { return false }
                    commands[commands.count - 1].outcome = AppendOutcome(
                        firstPosition: command.outcome.firstPosition, lastPosition: expected,
                        streamVersion: outcome.streamVersion, isReplay: true)
                } else {
                    guard events[offset].actor.utf8.count <= AppendRequest.maximumActorLength else { return false }
                    commands.append((events[offset].commandID, outcome))
                }
                do {
                    try NewEvent.validate(type: events[offset].type, payloadSize: events[offset].payload.count)
                } catch { return false }
                expected = expected.next
            }
            return true
        }
        // Records given must be these events': their positions are checked (the events', checked above, run on).
        guard runsOn, records?.holdPositions(from: first.position) ?? true else { return nil }
        let index = indexInKeyOrder ? grouping.sorted(commands: commands) : grouping.grouped(commands: commands)
        guard index.runsOn else { return nil }
        (firstPosition, lastPosition) = (first.position, LogPosition(expected.rawValue - 1))
        (self.records, self.index) = (records ?? EncodedRecords(events), index)
    }

    /// Calls `body` with each event's position and record, in order.
    package func forEachRecord(_ body: (LogPosition, UnsafeRawBufferPointer) throws -> Void) rethrows {
        try records.forEachRecord { offset, record in
            try body(LogPosition(firstPosition.rawValue + UInt64(offset)), record)
        }
    }
}
