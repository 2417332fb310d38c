/// One decision's part of the log's next write (``EventLog/append(_:eventCount:decide:)``): the decision state as of
/// every event before it, and the appends it decides. Its appends and state changes commit together, or not at all.
public protocol DecisionBatch: AnyObject {
    /// The time stamped on every event of the write.
    var recordedAt: EventTime { get }

    /// The last position assigned so far, this write's earlier appends included.
    var head: LogPosition { get }

    /// The decision state in this same write.
    var state: any StateWriter { get }

    /// Appends `request`'s events at the next positions, or returns the original outcome of a repeated command id.
    /// Every check comes before the first write, so an append that throws ``EventLogError`` has written nothing.
    func append(_ request: AppendRequest) throws -> AppendOutcome

    /// Appends one command's events exactly as another log recorded them (`chorus log import`): each at its own
    /// position, which must be the next, with its stream's next version, and its own time, ids and actor. All are
    /// checked before the first is written, so a refused command writes nothing.
    func appendRecorded(_ events: [RecordedEvent]) throws

    /// Appends the events ``PreparedRecordedEvents`` made ready, all of them or none: true once appended; false, having
    /// written nothing, when one of them would be refused or this log cannot take them in one go. Then
    /// ``appendRecorded(_:)``, a command at a time, appends those before the refused one and says why.
    func appendPrepared(_ events: PreparedRecordedEvents) throws -> Bool

    /// Appends the events ``PreparedRecordedEvents`` made ready like ``appendPrepared(_:)``, but holds their index
    /// entries in `held` instead of writing them, checked against those it holds: an import into an empty log, which
    /// writes them all at its end (``writeIndex(heldIn:)``), before anything else is appended. False, having written
    /// nothing, when one would be refused, when the log is neither empty nor ends with the events held, or when this
    /// log cannot hold its index.
    func appendPrepared(_ events: PreparedRecordedEvents, holdingIndexIn held: HeldImportIndex) throws -> Bool

    /// Writes the index entries `held` holds, which the log's last events have, and moves the indexes' checkpoint to
    /// the head. The caller then lets go of them (``HeldImportIndex/removeAll()``) once the write commits.
    func writeIndex(heldIn held: HeldImportIndex) throws
}

extension DecisionBatch {
    /// Takes none: the events go in a command at a time.
    public func appendPrepared(_ events: PreparedRecordedEvents) throws -> Bool { false }

    /// Holds none: the events go in with their index entries.
    public func appendPrepared(_ events: PreparedRecordedEvents, holdingIndexIn held: HeldImportIndex) throws -> Bool {
        false
    }

    /// Nothing to write: no index entries were held.
    public func writeIndex(heldIn held: HeldImportIndex) throws {
        precondition(held.eventCount == 0, "this log holds no index entries")
    }
}
