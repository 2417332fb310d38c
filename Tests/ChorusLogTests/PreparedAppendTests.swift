import ChorusLMDBLog
import ChorusLog
import ChorusTestSupport
import Foundation
import Testing

/// An import's batches come prepared (``PreparedRecordedEvents``: records encoded, index entries sorted) and go in
/// whole: the log must read, index and decide exactly as if they had gone in a command at a time, and take nothing of
/// a batch it would refuse a part of.
@Suite("Prepared appends")
struct PreparedAppendTests {
    /// 40 commands on four streams, every fifth with two events, as another log recorded them; `commandID` makes each
    /// command's id.
    private static func recordedElsewhere(
        in directory: String, commandID: () -> CommandID = { CommandID() }
    ) async throws -> [RecordedEvent] {
        try await withLog(directory + "/source") { log in
            for index in 0..<40 {
                let events = (0..<(index % 5 == 0 ? 2 : 1)).map { part in
                    NewEvent(type: "Tick", payload: Array("\(index).\(part)".utf8))
                }
                _ = try await log.append(
                    AppendRequest(
                        stream: try StreamID("s\(index % 4)"), expectedVersion: .any, events: events,
                        commandID: commandID(), actor: "tester"))
            }
            return try log.read(from: 1, limit: 1_000)
        }
    }

    private static let smallIndexBatches = {
        var configuration = LMDBEventLog.Configuration()
        configuration.indexBatchSize = 5
        return configuration
    }()

    /// Appends `events` prepared (their index's streams in key order, or as they came), in one write; whether the log
    /// took them.
    private static func appendPrepared(
        _ events: [RecordedEvent], to log: LMDBEventLog, indexInKeyOrder: Bool = true
    ) async throws -> Bool {
        let prepared = try #require(PreparedRecordedEvents(events, indexInKeyOrder: indexInKeyOrder))
        return try await log.append(.nonDurableBulkImport, eventCount: prepared.eventCount) { batch in
            try batch.appendPrepared(prepared)
        }
    }

    /// `log` holds `source`, read whole and stream by stream, each stream at its last version, and a command retried
    /// answers what it appended.
    private static func expectIndexed(_ log: LMDBEventLog, as source: [RecordedEvent]) async throws {
        #expect(try log.read(from: 1, limit: 1_000) == source)
        for stream in 0..<4 {
            let name = try StreamID("s\(stream)")
            #expect(try log.read(stream: name, limit: 100) == source.filter { $0.stream == name })
            #expect(try log.streamVersion(of: name) == source.last { $0.stream == name }?.streamVersion)
        }
        let retried = try await log.append(tick("s1", "again", command: source[20].commandID))
        #expect(retried.isReplay && retried.firstPosition == source[20].position)
    }

    @Test("batches appended prepared read, index and decide as the log they came from")
    func preparedBatchesMatchTheSource() async throws {
        try await withTemporaryDirectory { directory in
            let source = try await Self.recordedElsewhere(in: directory)
            #expect(source.count == 48)
            try await withLog(directory + "/copy", configuration: Self.smallIndexBatches) { log in
                // Cut between commands: positions 1–12, 13–30, 31–48 (13 and 31 start two-event commands).
                let cuts = [0, 12, 30, 48]
                for (start, end) in zip(cuts, cuts.dropFirst()) {
                    // The second prepared as for holding, its streams as they came: put in order when appended.
                    #expect(
                        try await Self.appendPrepared(Array(source[start..<end]), to: log, indexInKeyOrder: start != 12)
                    )
                    // Indexed in the same write: nothing is left for the writer to index later.
                    #expect(log.statistics.indexedThrough == LogPosition(UInt64(end)))
                }
                try await Self.expectIndexed(log, as: source)
                // Expected versions go on from the imported ones.
                let s1 = try #require(source.last { $0.stream == "s1" }?.streamVersion)
                let next = try await log.append(tick("s1", "new", expected: .exact(s1)))
                #expect(next.streamVersion == s1 + 1 && next.firstPosition == 49)
                #expect(try log.verifyIntegrity().isSound)
            }
        }
    }

    @Test("records encoded as the events come, split as an import's batches are, go in as the events' own")
    func encodedRecords() async throws {
        try await withTemporaryDirectory { directory in
            let source = try await Self.recordedElsewhere(in: directory)
            // Room for far fewer than come: the buffer grows.
            var first = EncodedRecords()
            first.reserve(events: 4, bytes: 64)
            for event in source[..<31] { first.append(event) }
            // Position 31 (the first event of a two-event command) held back for the next batch, as an import holds a
            // batch's last command, which then goes on after it.
            var second = first.removeSuffix(from: 30)
            second.reserve(events: 18, bytes: 64)
            for event in source[31...] { second.append(event) }
            #expect(first.count == 30 && second.count == 18)
            #expect(PreparedRecordedEvents(Array(source[30...]), records: first) == nil)
            // As many records as events, but those of the events before them: refused, not written as theirs.
            #expect(PreparedRecordedEvents(Array(source[1...30]), records: first) == nil)
            try await withLog(directory + "/copy") { log in
                for (events, records) in [(Array(source[..<30]), first), (Array(source[30...]), second)] {
                    let prepared = try #require(PreparedRecordedEvents(events, records: records))
                    #expect(
                        try await log.append(.nonDurableBulkImport, eventCount: prepared.eventCount) { batch in
                            try batch.appendPrepared(prepared)
                        })
                }
                try await Self.expectIndexed(log, as: source)
                #expect(try log.verifyIntegrity().isSound)
            }
            #expect(first.prefix(5).count == 5 && first.prefix(0).count == 0)
        }
    }

    /// Appends `events` prepared, their index entries held in `held`; whether the log took them.
    private static func appendHolding(
        _ events: [RecordedEvent], in held: HeldImportIndex, to log: LMDBEventLog
    ) async throws -> Bool {
        let prepared = try #require(PreparedRecordedEvents(events))
        let taken = try await log.append(.nonDurableBulkImport, eventCount: prepared.eventCount) { batch in
            try batch.appendPrepared(prepared, holdingIndexIn: held)
        }
        if taken { held.add(prepared) }
        return taken
    }

    @Test("an empty log's batches with their index held: checked against those before, indexed at the end")
    func heldIndex() async throws {
        try await withTemporaryDirectory { directory in
            let source = try await Self.recordedElsewhere(in: directory)
            try await withLog(directory + "/copy") { log in
                let held = HeldImportIndex(maximumEvents: 1_000)
                #expect(try await Self.appendHolding(Array(source[0..<12]), in: held, to: log))
                // A command held before (its id below the highest held), or a stream's version skipped: not taken.
                var again = Array(source[12..<30])
                let single = try #require(
                    again.indices.last { index in again.filter { $0.commandID == again[index].commandID }.count == 1 })
                again[single] = Self.event(again[single], command: source[3].commandID)
                #expect(!(try await Self.appendHolding(again, in: held, to: log)))
                let skipped = source[12..<30].map {
                    $0.stream == "s2" ? Self.event($0, streamVersion: $0.streamVersion + 1) : $0
                }
                #expect(!(try await Self.appendHolding(skipped, in: held, to: log)))
                #expect(log.head == 12 && held.eventCount == 12)
                #expect(try await Self.appendHolding(Array(source[12..<30]), in: held, to: log))
                #expect(try await Self.appendHolding(Array(source[30..<48]), in: held, to: log))
                // Read before the index is written: from the events after the checkpoint, as after a stop.
                #expect(try log.read(stream: "s1", limit: 100) == source.filter { $0.stream == "s1" })
                try await log.append(.nonDurableBulkImport, eventCount: 0) { batch in
                    try batch.writeIndex(heldIn: held)
                }
                held.removeAll()
                try await Self.expectIndexed(log, as: source)
                #expect(try log.verifyIntegrity().isSound)
                // Nothing is held over a log that has events of its own.
                let fresh = HeldImportIndex(maximumEvents: 1_000)
                #expect(!(try await Self.appendHolding(Array(source[0..<12]), in: fresh, to: log)))
            }
        }
    }

    /// The commands table takes its keys in id order only: ids that do not increase from batch to batch (another
    /// log's, made by a client) are sorted before they are written.
    @Test("batches held whose command ids come in no order are indexed as the log they came from")
    func heldIndexOfUnorderedCommands() async throws {
        try await withTemporaryDirectory { directory in
            let source = try await Self.recordedElsewhere(in: directory) { CommandID(UUID()) }
            let commands = source.map(\.commandID.uuid.uuidString)
            #expect(commands != commands.sorted())
            try await withLog(directory + "/copy") { log in
                let held = HeldImportIndex(maximumEvents: 1_000)
                for (start, end) in [(0, 12), (12, 30), (30, 48)] {
                    #expect(try await Self.appendHolding(Array(source[start..<end]), in: held, to: log))
                }
                try await log.append(.nonDurableBulkImport, eventCount: 0) { batch in
                    try batch.writeIndex(heldIn: held)
                }
                held.removeAll()
                try await Self.expectIndexed(log, as: source)
                #expect(try log.verifyIntegrity().isSound)
            }
        }
    }

    @Test("a batch the log would refuse a part of is not taken, and nothing of it is written")
    func refusedBatchesWriteNothing() async throws {
        try await withTemporaryDirectory { directory in
            let source = try await Self.recordedElsewhere(in: directory)
            // The first 12 go in; the next batch starts at position 13.
            try await withLog(directory + "/copy") { log in
                try await Self.expectRefusals(of: source, by: log)
            }
        }
    }

    /// Prepared entries go on from the indexes; while the writer holds appends it has not indexed yet, a batch goes in
    /// a command at a time.
    @Test("a batch is not taken while the log holds unindexed appends, and goes in a command at a time")
    func notTakenOverAnUnindexedTail() async throws {
        try await withTemporaryDirectory { directory in
            let source = try await Self.recordedElsewhere(in: directory)
            try await withLog(directory + "/copy") { log in
                try await Self.appendByCommand(Array(source[0..<12]), to: log)
                #expect(log.statistics.indexedThrough == 0)
                let rest = Array(source[12..<30])
                #expect(try await Self.appendPrepared(rest, to: log) == false)
                #expect(log.head == 12)
                try await Self.appendByCommand(rest, to: log)
                #expect(try log.read(from: 1, limit: 1_000) == Array(source[0..<30]))
                #expect(try log.verifyIntegrity().isSound)
            }
        }
    }

    /// Appends `events` a command at a time, as an import does with a batch the log does not take whole.
    private static func appendByCommand(_ events: [RecordedEvent], to log: LMDBEventLog) async throws {
        var start = 0
        while start < events.count {
            let end = events[start...].firstIndex { $0.commandID != events[start].commandID } ?? events.count
            let command = Array(events[start..<end])
            _ = try await log.append(.nonDurableBulkImport, eventCount: command.count) { batch in
                try batch.appendRecorded(command)
            }
            start = end
        }
    }

    private static func expectRefusals(of source: [RecordedEvent], by log: LMDBEventLog) async throws {
        #expect(try await appendPrepared(Array(source[0..<12]), to: log))
        let rest = Array(source[12..<30])
        // Not the next position.
        #expect(try await appendPrepared(Array(source[13..<30]), to: log) == false)
        // A command already appended again: the first, and the last (of one event) before this batch.
        for early in [source[0], source[11]] {
            let again = rest.map { $0.commandID == rest[0].commandID ? event($0, command: early.commandID) : $0 }
            #expect(try await appendPrepared(again, to: log) == false)
        }
        // A stream that does not go on from its version.
        let skipping = rest.map { $0.stream == "s3" ? event($0, streamVersion: $0.streamVersion + 1) : $0 }
        #expect(try await appendPrepared(skipping, to: log) == false)
        #expect(log.head == 12)
        #expect(try await appendPrepared(rest, to: log))
        #expect(try log.read(from: 1, limit: 1_000) == Array(source[0..<30]))
        #expect(try log.verifyIntegrity().isSound)
    }

    @Test("events that do not run on as one log's would are not prepared: a gap, a command split, a version skipped")
    func unpreparable() async throws {
        try await withTemporaryDirectory { directory in
            let source = try await Self.recordedElsewhere(in: directory)
            #expect(PreparedRecordedEvents(source) != nil)
            #expect(PreparedRecordedEvents(source.filter { $0.position != 20 }) == nil)
            // Positions 1 and 2 are one command's, 3 another's; 4 comes back to the first command.
            var split = source
            split[3] = Self.event(split[3], command: split[0].commandID)
            #expect(PreparedRecordedEvents(split) == nil)
            let skipped = source.map { $0.position == 30 ? Self.event($0, streamVersion: $0.streamVersion + 1) : $0 }
            #expect(PreparedRecordedEvents(skipped) == nil)
            #expect(PreparedRecordedEvents([RecordedEvent]()) == nil)
        }
    }

    /// `event` with another command id or stream version.
    private static func event(
        _ event: RecordedEvent, command: CommandID? = nil, streamVersion: UInt64? = nil
    ) -> RecordedEvent {
        RecordedEvent(
            position: event.position, stream: event.stream, streamVersion: streamVersion ?? event.streamVersion,
            type: event.type, schemaVersion: event.schemaVersion, recordedAt: event.recordedAt,
            commandID: command ?? event.commandID, correlationID: event.correlationID, actor: event.actor,
            payload: event.payload)
    }
}
