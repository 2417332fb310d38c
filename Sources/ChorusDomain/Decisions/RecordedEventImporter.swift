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

    /// Events decoded (by ``decode(_:)``) for appending, in commands; decoding stops at the first event that does not
    /// decode.
    public struct Decoded: Sendable {
        fileprivate let commands: [[(RecordedEvent, DomainEvent)]]
        fileprivate let eventCount: Int
        fileprivate let undecodable: (any Error)?
    }

    /// Decodes `events` (opening their sealed fields) to be appended: an import decodes its next batch while the one
    /// before is appended. The events come in position order from the log's next position, each command's together.
    public func decode(_ events: [RecordedEvent]) -> Decoded {
        var decoded: [(RecordedEvent, DomainEvent)] = []
        decoded.reserveCapacity(events.count)
        var undecodable: Error?
        for event in events {
            do {
                decoded.append((event, try DomainEvent(decoding: event, keys: keys)))
            } catch {
                undecodable = error
                // What decodes goes in, up to the command of the first event that does not.
                while decoded.last?.0.commandID == event.commandID { decoded.removeLast() }
                break
            }
        }
        return Decoded(commands: Self.commands(decoded), eventCount: decoded.count, undecodable: undecodable)
    }

    /// Appends what ``decode(_:)`` made of a batch, then throws its decoding error, if it met one. Not durable until
    /// ``EventLog/syncToDisk()``.
    public func append(_ decoded: Decoded) async throws {
        let commands = decoded.commands
        let state = self.state
        // What it records must be in this Chorus's format, and so must what is there.
        try await upgrade.run()
        let refusal: EventLogError? = try await log.append(.nonDurableBulkImport, eventCount: decoded.eventCount) {
            batch in
            if batch.head == .start { try DecisionStateUpgrade.stamp(in: batch.state, state: state) }
            for command in commands {
                do {
                    try batch.appendRecorded(command.map(\.0))
                } catch let error as EventLogError {
                    return error
                }
                for (event, domainEvent) in command {
                    try state.apply(domainEvent, at: event.position, in: batch.state)
                }
            }
            return nil
        }
        if let refusal { throw refusal }
        if let undecodable = decoded.undecodable { throw undecodable }
    }

    /// Consecutive events of one command, together.
    private static func commands(_ events: [(RecordedEvent, DomainEvent)]) -> [[(RecordedEvent, DomainEvent)]] {
        var commands: [[(RecordedEvent, DomainEvent)]] = []
        for event in events {
            if let last = commands.last?.last, last.0.commandID == event.0.commandID {
                commands[commands.count - 1].append(event)
            } else {
                commands.append([event])
            }
        }
        return commands
    }
}
