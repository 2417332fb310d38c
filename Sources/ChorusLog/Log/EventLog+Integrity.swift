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

extension EventLog {
    /// Checks the whole log at one snapshot: positions gapless from 1, every record's checksum and layout, stream
    /// versions gapless from 1 and indexed, stream heads, and that every event's command is recorded.
    public func verifyIntegrity() throws -> LogIntegrityReport {
        try withReadTransaction { transaction in
            var report = LogIntegrityReport()
            var streamVersions: [StreamID: UInt64] = [:]
            func problem(_ position: LogPosition?, _ message: String) -> LogIntegrityReport {
                report.firstProblem = LogIntegrityProblem(position: position, message: message)
                report.streamCount = streamVersions.count
                return report
            }

            let found: LogIntegrityReport? = try transaction.withCursor(on: schema.events) { cursor in
                var entry = try cursor.first()
                var expected = LogPosition(1)
                while let current = entry {
                    guard current.key.count == 8 else { return problem(expected, "an events key is \(current.key.count) bytes") }
                    let key = LogSchema.position(fromKey: current.key)
                    guard key == expected else { return problem(expected, "missing: the next stored position is \(key)") }
                    let event: RecordedEvent
                    do {
                        event = try EventRecordCodec.decode(current.value, storedAt: key)
                    } catch let error as EventLogError {
                        return problem(key, error.message)
                    }
                    let version = (streamVersions[event.stream] ?? 0) + 1
                    guard event.streamVersion == version else {
                        return problem(key, "stream \(event.stream) has version \(event.streamVersion) where \(version) was due")
                    }
                    streamVersions[event.stream] = version
                    let indexKey = LogSchema.streamIndexKey(prefix: LogSchema.streamIndexPrefix(event.stream), version: version)
                    let indexed = try indexKey.withUnsafeBytes { try transaction.value(in: schema.streamIndex, for: $0) }
                    guard let indexed, indexed.count == 8, LogSchema.position(fromKey: indexed) == key else {
                        return problem(key, "stream \(event.stream) version \(version) is not indexed at this position")
                    }
                    let command = try withUnsafeBytes(of: event.commandID.uuid.uuid) {
                        try transaction.value(in: schema.commands, for: $0)
                    }
                    guard let command, command.count == 24,
                        UInt64(littleEndian: command.loadUnaligned(fromByteOffset: 0, as: UInt64.self)) <= key.rawValue,
                        UInt64(littleEndian: command.loadUnaligned(fromByteOffset: 8, as: UInt64.self)) >= key.rawValue
                    else {
                        return problem(key, "command \(event.commandID) is not recorded as covering this position")
                    }
                    report.head = key
                    report.eventCount += 1
                    expected = key.next
                    entry = try cursor.next()
                }
                return nil
            }
            if let found { return found }

            report.streamCount = streamVersions.count
            for (stream, version) in streamVersions {
                var name = stream.rawValue
                let head = try name.withUTF8 { try transaction.value(in: schema.streamHeads, for: UnsafeRawBufferPointer($0)) }
                guard let head, head.count == 8, UInt64(littleEndian: head.loadUnaligned(as: UInt64.self)) == version else {
                    return problem(nil, "the stored head of stream \(stream) is not its last version \(version)")
                }
            }
            let storedHeads = try transaction.entryCount(schema.streamHeads)
            guard storedHeads == streamVersions.count else {
                return problem(nil, "\(storedHeads) stream heads are stored for \(streamVersions.count) streams")
            }
            let indexed = try transaction.entryCount(schema.streamIndex)
            guard indexed == Int(report.eventCount) else {
                return problem(nil, "the stream index holds \(indexed) entries for \(report.eventCount) events")
            }
            return report
        }
    }
}
