/// Events another log recorded, made ready to append in one go (``DecisionBatch/appendPrepared(_:)``) by the task
/// that has them, before the log's writer gets them: their records encoded, and their index entries grouped and
/// sorted. The writer checks them against the log, and writes the records and the index entries in one transaction:
/// no tail of them is kept in memory to be written later.
///
/// What can be checked without the log is checked here (positions, versions and commands running on within the
/// events, event and actor limits); what needs the log (the first position, each stream's version before, command
/// ids already used) is checked by the writer, before it writes anything.
public struct PreparedRecordedEvents: Sendable {
    let firstPosition: LogPosition
    let lastPosition: LogPosition
    /// Each event's record, back to back; the record of the event at offset i ends at `recordEnds[i]`.
    let records: [UInt8]
    let recordEnds: [Int]
    /// The events' index entries, sorted: the writer writes them in the same transaction as the records.
    let index: SortedIndexEntries

    public var eventCount: Int { recordEnds.count }

    /// Prepares `events`, which come in position order, each command's together; nil when they do not run on as one
    /// log's would, or one would be refused: appended one command at a time instead, the first refused says why.
    public init?(_ events: some Collection<RecordedEvent>) {
        guard let first = events.first else { return nil }
        var records: [UInt8] = []
        var recordEnds: [Int] = []
        recordEnds.reserveCapacity(events.count)
        // Most streams of a batch have a single event.
        var grouping = SortedIndexEntries.Grouping(entries: events.count, streams: events.count)
        var lastGroup = -1
        // In the order they came; a command's events come together, and whether one comes twice is seen once they
        // are sorted (``SortedIndexEntries/runsOn``), without a table of them here.
        var commands: [(id: CommandID, outcome: AppendOutcome)] = []
        var expected = first.position
        for event in events {
            guard event.position == expected else { return nil }
            let group = grouping.add(event.stream, version: event.streamVersion, position: event.position)
            defer { lastGroup = group }
            if let command = commands.last, command.id == event.commandID {
                guard group == lastGroup else { return nil }
                commands[commands.count - 1].outcome = AppendOutcome(
                    firstPosition: command.outcome.firstPosition, lastPosition: event.position,
                    streamVersion: event.streamVersion, isReplay: true)
            } else {
                guard event.actor.utf8.count <= AppendRequest.maximumActorLength else { return nil }
                commands.append(
                    (
                        event.commandID,
                        AppendOutcome(
                            firstPosition: event.position, lastPosition: event.position,
                            streamVersion: event.streamVersion, isReplay: true)
                    ))
            }
            let fields = EventRecordCodec.Fields(event)
            do { try fields.event.validate() } catch { return nil }
            let start = records.count
            let size = EventRecordCodec.encodedSize(fields)
            records.append(contentsOf: repeatElement(0, count: size))
            records.withUnsafeMutableBytes { buffer in
                EventRecordCodec.encode(
                    fields, into: UnsafeMutableRawBufferPointer(rebasing: buffer[start..<start + size]))
            }
            recordEnds.append(records.count)
            expected = expected.next
        }
        let index = grouping.sorted(commands: commands)
        guard index.runsOn else { return nil }
        (firstPosition, lastPosition) = (first.position, LogPosition(expected.rawValue - 1))
        (self.records, self.recordEnds, self.index) = (records, recordEnds, index)
    }

    /// Calls `body` with each event's position and record, in order.
    func forEachRecord(_ body: (LogPosition, UnsafeRawBufferPointer) throws -> Void) rethrows {
        try records.withUnsafeBytes { bytes in
            var start = 0
            for (offset, end) in recordEnds.enumerated() {
                try body(
                    LogPosition(firstPosition.rawValue + UInt64(offset)),
                    UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
                start = end
            }
        }
    }
}
