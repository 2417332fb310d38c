import ChorusLog

/// A decision's part of a rehearsed write on the replica (``LMDBEventLog/rehearse(eventCount:_:)``): it reads and
/// writes through the replica's batch, and keeps what it appended and every state change it made, in order, to be
/// committed in PostgreSQL and then applied to every replica, this one included.
final class RecordingBatch: DecisionBatch, StateWriter {
    private let inner: any DecisionBatch
    private(set) var events: [RecordedEvent] = []
    private(set) var changes: [StateChange] = []

    init(_ inner: any DecisionBatch) { self.inner = inner }

    var recordedAt: EventTime { inner.recordedAt }
    var head: LogPosition { inner.head }
    var state: any StateWriter { self }

    func append(_ request: AppendRequest) throws -> AppendOutcome {
        let outcome = try inner.append(request)
        guard !outcome.isReplay else { return outcome }
        // What the log stored: the next positions and stream versions, this write's time, the request's ids.
        let firstVersion = outcome.streamVersion - UInt64(request.events.count) + 1
        for (offset, event) in request.events.enumerated() {
            events.append(
                RecordedEvent(
                    position: LogPosition(outcome.firstPosition.rawValue + UInt64(offset)), stream: request.stream,
                    streamVersion: firstVersion + UInt64(offset), type: event.type, schemaVersion: event.schemaVersion,
                    recordedAt: inner.recordedAt, commandID: request.commandID, correlationID: request.correlationID,
                    actor: request.actor, payload: event.payload))
        }
        return outcome
    }

    func appendRecorded(_ recorded: [RecordedEvent]) throws {
        try inner.appendRecorded(recorded)
        events += recorded
    }

    // MARK: The state, read through and written through

    var position: LogPosition { get throws { try inner.state.position } }

    func withValue<R>(for key: [UInt8], in table: StateTable, _ body: (UnsafeRawBufferPointer?) throws -> R) throws -> R
    {
        try inner.state.withValue(for: key, in: table, body)
    }

    func forEach(
        in table: StateTable, from start: [UInt8],
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        try inner.state.forEach(in: table, from: start, body)
    }

    func put(_ value: [UInt8], for key: [UInt8], in table: StateTable) throws {
        try inner.state.put(value, for: key, in: table)
        changes.append(StateChange(table: table.name, key: key, value: value))
    }

    @discardableResult
    func delete(_ key: [UInt8], in table: StateTable) throws -> Bool {
        let removed = try inner.state.delete(key, in: table)
        if removed { changes.append(StateChange(table: table.name, key: key, value: nil)) }
        return removed
    }
}
