import ChorusLog

/// Appends events another log recorded (an export) to a log, exactly as recorded, and records in the decision state
/// what each decides, as the command path would have: `chorus log import` and `chorus replay --into`.
///
/// Every event is decoded before anything is appended. Commands go in whole and in order; the first that is refused
/// stops the import there, with everything before it appended, so an interrupted or refused import can be run again
/// from where the log now ends.
public struct RecordedEventImporter: Sendable {
    private let log: any EventLog
    private let state = DecisionState()
    private let keys: any PersonalDataKeys
    private let upgrade: StateUpgradeOnce

    /// `keys` must hold the data keys of the users whose events come in.
    public init(log: any EventLog, keys: any PersonalDataKeys) {
        self.log = log
        self.keys = keys
        upgrade = StateUpgradeOnce(log: log, keys: keys)
    }

    /// Events decoded (by ``decode(_:)``) for appending, in commands, each with what it changes in the decision state;
    /// decoding stops at the first event that does not decode.
    public struct Decoded: Sendable {
        fileprivate let commands: [(events: [RecordedEvent], changes: [DecisionState.Change])]
        /// The events of `commands`, ready to append in one go; nil when one would be refused.
        fileprivate let prepared: PreparedRecordedEvents?
        fileprivate let eventCount: Int
        fileprivate let undecodable: (any Error)?
    }

    /// Decodes `events` (opening their sealed fields) to be appended, works out what they change in the decision
    /// state, and prepares their records and index entries: an import does this for its next batch while the one
    /// before is appended, leaving the log's writer only the checks against the log and the writing. The events come in position order from the log's next position, each command's together.
    public func decode(_ events: [RecordedEvent]) -> Decoded {
        var commands: [(events: [RecordedEvent], changes: [DecisionState.Change])] = []
        var eventCount = 0
        var undecodable: Error?
        for event in events {
            let sameCommand = commands.last?.events.last?.commandID == event.commandID
            let changes: [DecisionState.Change]
            do {
                changes = state.changes(for: try DomainEvent(decoding: event, keys: keys), at: event.position)
            } catch {
                undecodable = error
                // What decodes goes in, up to the command of the first event that does not.
                if sameCommand { eventCount -= commands.removeLast().events.count }
                break
            }
            if sameCommand {
                commands[commands.count - 1].events.append(event)
                commands[commands.count - 1].changes += changes
            } else {
                commands.append(([event], changes))
            }
            eventCount += 1
        }
        return Decoded(
            commands: commands, prepared: PreparedRecordedEvents(events.prefix(eventCount)), eventCount: eventCount,
            undecodable: undecodable)
    }

    /// Appends what ``decode(_:)`` made of a batch, then throws its decoding error, if it met one. Not durable until
    /// ``EventLog/syncToDisk()``.
    public func append(_ decoded: Decoded) async throws {
        let handed = HandedBatch(decoded.commands, prepared: decoded.prepared)
        let state = self.state
        // What it records must be in this Chorus's format, and so must what is there.
        try await upgrade.run()
        let refusal: EventLogError? = try await log.append(.nonDurableBulkImport, eventCount: decoded.eventCount) {
            batch in
            if batch.head == .start { try DecisionStateUpgrade.stamp(in: batch.state, state: state) }
            // In one go when the log takes them so; else a command at a time, up to the first it refuses.
            if let prepared = handed.prepared, try batch.appendPrepared(prepared) {
                for command in handed.commands ?? [] { try state.apply(command.changes, in: batch.state) }
                return nil
            }
            for command in handed.commands ?? [] {
                do {
                    try batch.appendRecorded(command.events)
                } catch let error as EventLogError {
                    return error
                }
                try state.apply(command.changes, in: batch.state)
            }
            return nil
        }
        handed.empty()
        if let refusal { throw refusal }
        if let undecodable = decoded.undecodable { throw undecodable }
    }
}

/// A batch handed to the log's writer, and emptied by the appending task once the writer is done with it: the batch
/// (a few thousand events and their changes) is then freed on that task's thread, not on the writer's, which is an
/// import's bottleneck.
private final class HandedBatch: @unchecked Sendable {
    /// Read by the writer's closure, then set to nil once the append has returned: never at once.
    private(set) var commands: [(events: [RecordedEvent], changes: [DecisionState.Change])]?
    private(set) var prepared: PreparedRecordedEvents?

    init(
        _ commands: [(events: [RecordedEvent], changes: [DecisionState.Change])], prepared: PreparedRecordedEvents?
    ) {
        (self.commands, self.prepared) = (commands, prepared)
    }

    func empty() {
        commands = nil
        prepared = nil
    }
}
