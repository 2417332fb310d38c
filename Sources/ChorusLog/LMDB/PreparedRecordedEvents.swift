/// Events another log recorded, made ready to append in one go (``DecisionBatch/appendPrepared(_:)``) by the task
/// that has them, before the log's writer gets them: their records encoded, and their index entries grouped and
/// sorted. An import's writer is its bottleneck; this leaves it the checks against the log and the copying.
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
    /// What the events add to the writer's tail, index entries sorted.
    let tail: UnindexedTail

    public var eventCount: Int { recordEnds.count }

    /// Prepares `events`, which come in position order, each command's together; nil when they do not run on as one
    /// log's would, or one would be refused: appended one command at a time instead, the first refused says why.
    public init?(_ events: some Collection<RecordedEvent>) {
        guard let first = events.first else { return nil }
        var tail = UnindexedTail(reservingCapacity: events.count)
        var records: [UInt8] = []
        var recordEnds: [Int] = []
        recordEnds.reserveCapacity(events.count)
        var expected = first.position
        var previous: (command: CommandID, stream: StreamID)?
        for event in events {
            guard event.position == expected else { return nil }
            if let previous, previous.command == event.commandID {
                guard previous.stream == event.stream else { return nil }
            } else {
                // A command's events come together, once.
                guard tail.outcome(ofCommand: event.commandID) == nil,
                    event.actor.utf8.count <= AppendRequest.maximumActorLength
                else { return nil }
            }
            if let version = tail.streamVersions[event.stream], version + 1 != event.streamVersion { return nil }
            let newEvent = NewEvent(type: event.type, schemaVersion: event.schemaVersion, payload: event.payload)
            do { try newEvent.validate() } catch { return nil }
            let fields = EventRecordCodec.Fields(
                position: event.position, streamVersion: event.streamVersion, recordedAt: event.recordedAt,
                commandID: event.commandID, correlationID: event.correlationID, stream: event.stream,
                actor: event.actor, event: newEvent)
            let start = records.count
            let size = EventRecordCodec.encodedSize(fields)
            records.append(contentsOf: repeatElement(0, count: size))
            records.withUnsafeMutableBytes { buffer in
                EventRecordCodec.encode(
                    fields, into: UnsafeMutableRawBufferPointer(rebasing: buffer[start..<start + size]))
            }
            recordEnds.append(records.count)
            tail.record(event)
            previous = (event.commandID, event.stream)
            expected = expected.next
        }
        tail.sortIndexEntries()
        (firstPosition, lastPosition) = (first.position, LogPosition(expected.rawValue - 1))
        (self.records, self.recordEnds, self.tail) = (records, recordEnds, tail)
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
