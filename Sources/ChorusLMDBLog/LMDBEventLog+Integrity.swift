import ChorusLog
import ChorusStorage

/// The result of ``EventLog/verifyIntegrity()``.
public struct LogIntegrityReport: Sendable {
    public var head: LogPosition = .start
    public var eventCount: UInt64 = 0
    public var streamCount = 0
    /// The first thing found wrong, in log order; nil when the log is sound.
    public var firstProblem: LogIntegrityProblem?

    public var isSound: Bool { firstProblem == nil }
}

/// One thing wrong with a stored log.
public struct LogIntegrityProblem: Sendable, CustomStringConvertible {
    /// Where, when it belongs to a position.
    public let position: LogPosition?
    public let message: String

    public var description: String {
        position.map { "position \($0): \(message)" } ?? message
    }
}

extension LMDBEventLog {
    /// Checks the whole log at one snapshot: positions gapless from 1, every record's checksum and layout, stream
    /// versions gapless from 1; and that the indexes hold exactly the events up to their checkpoint: each indexed
    /// under its stream and version, each command recorded, each stream's head.
    public func verifyIntegrity() throws -> LogIntegrityReport {
        let index = LogIndex(schema: schema)
        return try withReadTransaction { transaction in
            var report = LogIntegrityReport()
            var streamVersions: [StreamID: UInt64] = [:]
            var indexedEvents = 0
            func problem(_ position: LogPosition?, _ message: String) -> LogIntegrityReport {
                report.firstProblem = LogIntegrityProblem(position: position, message: message)
                report.streamCount = streamVersions.count
                return report
            }
            let checkpoint = try index.indexedThrough(in: transaction)
            let found: LogIntegrityReport? = try transaction.withEventCursor(schema) { cursor in
                var expected = LogPosition(1)
                var entry: EventCursor.Entry?
                do {
                    entry = try cursor.seek(atLeast: .start)
                } catch let error as EventLogError {
                    return problem(expected, error.message)
                }
                while let current = entry {
                    let key = current.position
                    guard key == expected else {
                        return problem(expected, "missing: the next stored position is \(key)")
                    }
                    let event: RecordedEvent
                    do {
                        event = try EventCursor.decode(current)
                    } catch let error as EventLogError {
                        return problem(key, error.message)
                    }
                    let version = (streamVersions[event.stream] ?? 0) + 1
                    guard event.streamVersion == version else {
                        return problem(
                            key, "stream \(event.stream) has version \(event.streamVersion) where \(version) was due")
                    }
                    streamVersions[event.stream] = version
                    if key <= checkpoint {
                        if let message = try indexProblem(for: event, index: index, in: transaction) {
                            return problem(key, message)
                        }
                        indexedEvents += 1
                    }
                    report.head = key
                    report.eventCount += 1
                    expected = key.next
                    do {
                        entry = try cursor.next()
                    } catch let error as EventLogError {
                        return problem(expected, error.message)
                    }
                }
                return nil
            }
            if let found { return found }
            report.streamCount = streamVersions.count
            guard checkpoint <= report.head else {
                return problem(checkpoint, "the indexes claim to cover position \(checkpoint), past the last event")
            }

            // Each indexed event has its entry (above): the same count leaves no entry the events do not account
            // for, so each stream's last entry is its head.
            let indexed = try transaction.entryCount(schema.streamIndex)
            guard indexed == indexedEvents else {
                return problem(nil, "the stream index holds \(indexed) entries for \(indexedEvents) indexed events")
            }
            return report
        }
    }

    /// What is wrong with the index entries of an event the indexes should cover, if anything.
    private func indexProblem(
        for event: RecordedEvent, index: LogIndex, in transaction: LMDBReadTransaction
    ) throws -> String? {
        let indexKey = LogSchema.streamIndexKey(
            prefix: LogSchema.streamIndexPrefix(event.stream), version: event.streamVersion)
        let indexed = try indexKey.withUnsafeBytes { try transaction.value(in: schema.streamIndex, for: $0) }
        guard let indexed, indexed.count == 8, LogSchema.position(fromIndexValue: indexed) == event.position else {
            return "stream \(event.stream) version \(event.streamVersion) is not indexed at this position"
        }
        guard let command = try index.outcome(ofCommand: event.commandID, in: transaction),
            command.firstPosition <= event.position, command.lastPosition >= event.position
        else {
            return "command \(event.commandID) is not recorded as covering this position"
        }
        return nil
    }
}
