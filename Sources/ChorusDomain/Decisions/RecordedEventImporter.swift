import ChorusLog
import Synchronization

/// Appends events another log recorded (an export) to a log, exactly as recorded, and records in the decision state
/// what each decides, as the command path would have: `chorus log import` and `chorus replay --into`.
///
/// Every event is decoded before anything is appended. Commands go in whole and in order; the first that is refused
/// stops the import there, with everything before it appended, so an interrupted or refused import can be run again
/// from where the log now ends. Call ``finish()`` once the last batch is appended, or once the import stops.
///
/// Into an empty log, the batches' index entries (``HeldImportIndex``) and decision-state changes are held in memory
/// and written once, at the end, appended in key order to the empty tables: batch by batch, they were searches and
/// page copies all over trees that grow to a million entries, most of the log writer's work. Until then the state's
/// format is not stamped, so a log whose import stopped without writing them has its state folded again from the log
/// before its first decision (``DecisionStateUpgrade``), and its index rebuilt from its events at its next opening.
public struct RecordedEventImporter: Sendable {
    /// At most this many events' index entries and changes are held (about 300 bytes each: 300 MB for the 1M-event
    /// demo log), in at most ``maximumHeldBatches`` batches: an import's later events go in with their index entries
    /// and changes, after what was held is written.
    public static let maximumHeldEvents = 1 << 20
    public static let maximumHeldBatches = 4_096

    private let log: any EventLog
    private let state = DecisionState()
    private let keys: any PersonalDataKeys
    private let upgrade: StateUpgradeOnce
    private let held: Held

    /// `keys` must hold the data keys of the users whose events come in.
    public init(log: any EventLog, keys: any PersonalDataKeys) {
        self.log = log
        self.keys = keys
        upgrade = StateUpgradeOnce(log: log, keys: keys)
        held = Held()
    }

    /// Events decoded (by ``decode(_:)``) for appending, in commands, with what each command changes in the decision
    /// state; decoding stops at the first event that does not decode. The batch is held once: command i is
    /// `events[commandEnds[i - 1]..<commandEnds[i]]`, and its changes likewise, rather than an array for each command.
    public struct Decoded: Sendable {
        fileprivate let events: [RecordedEvent]
        fileprivate let commandEnds: [Int]
        fileprivate let changes: DecisionState.ChangeList
        fileprivate let changeEnds: [Int]
        /// All of `changes` in the order to write them, when they go in one go.
        fileprivate let sortedChanges: DecisionState.SortedChanges?
        /// The events, ready to append in one go; nil when one would be refused.
        fileprivate let prepared: PreparedRecordedEvents?
        fileprivate let undecodable: (any Error)?

        /// Calls `body` with each command's events and where its changes are in `changes`, in order.
        fileprivate func forEachCommand(
            _ body: (ArraySlice<RecordedEvent>, Range<Int>) throws -> Void
        ) rethrows {
            var (start, changeStart) = (0, 0)
            for (end, changeEnd) in zip(commandEnds, changeEnds) {
                try body(events[start..<end], changeStart..<changeEnd)
                (start, changeStart) = (end, changeEnd)
            }
        }
    }

    /// Decodes `events` (opening their sealed fields) to be appended, works out what they change in the decision
    /// state, and prepares their records and index entries: an import does this for its next batch while the one
    /// before is appended, leaving the log's writer only the checks against the log and the writing. The events come
    /// in position order from the log's next position, each command's together; `records`, when given, are their
    /// records, encoded as they were read (see ``EncodedRecords``).
    public func decode(_ events: [RecordedEvent], records: EncodedRecords? = nil) -> Decoded {
        var commandEnds: [Int] = []
        var changes = DecisionState.ChangeList()
        // About one change per event, most of them two ids and a position.
        changes.reserveCapacity(events.count, bytesEach: 64)
        var changeEnds: [Int] = []
        var undecodable: Error?
        // By index, and only the fields decoding reads: an element handed on was a copy of it.
        events.withUnsafeBufferPointer { events in
            for offset in events.indices {
                let sameCommand = offset > 0 && events[offset - 1].commandID == events[offset].commandID
                do {
                    let (type, payload) = (events[offset].type, events[offset].payload)
                    let event = try DomainEvent.decode(
                        typeName: type, version: events[offset].schemaVersion, payload: payload,
                        at: events[offset].position, keys: keys)
                    state.appendChanges(for: event, at: events[offset].position, to: &changes)
                } catch {
                    undecodable = error
                    // What decodes goes in, up to the command of the first event that does not.
                    if sameCommand {
                        commandEnds.removeLast()
                        changeEnds.removeLast()
                    }
                    changes.keepFirst(changeEnds.last ?? 0)
                    break
                }
                if sameCommand {
                    (commandEnds[commandEnds.count - 1], changeEnds[changeEnds.count - 1]) = (offset + 1, changes.count)
                } else {
                    commandEnds.append(offset + 1)
                    changeEnds.append(changes.count)
                }
            }
        }
        let decoded = commandEnds.last ?? 0
        let kept = decoded == events.count ? events : Array(events.prefix(decoded))
        let keptRecords = decoded == events.count ? records : records?.prefix(decoded)
        let prepared = PreparedRecordedEvents(kept, records: keptRecords, indexInKeyOrder: !held.mayStillHold)
        return Decoded(
            events: kept, commandEnds: commandEnds, changes: changes, changeEnds: changeEnds,
            sortedChanges: prepared == nil ? nil : DecisionState.SortedChanges(changes), prepared: prepared,
            undecodable: undecodable)
    }

    /// Appends what ``decode(_:)`` made of a batch, then throws its decoding error, if it met one. Not durable until
    /// ``EventLog/syncToDisk()``. Batches are appended one at a time, in order.
    public func append(_ decoded: Decoded) async throws {
        let handed = HandedBatch(decoded)
        // What it records must be in this Chorus's format, and so must what is there.
        try await upgrade.run()
        if try await appendHolding(handed) {
            handed.decoded = nil
            if let undecodable = decoded.undecodable {
                try await finish()
                throw undecodable
            }
            return
        }
        // What is held goes in first: the appends below are checked against the indexes, and change the state.
        try await finish()
        let state = self.state
        let refusal: EventLogError? = try await log.append(.nonDurableBulkImport, eventCount: decoded.events.count) {
            batch in
            if batch.head == .start { try DecisionStateUpgrade.stamp(in: batch.state, state: state) }
            guard let decoded = handed.decoded else { return nil }
            // In one go when the log takes them so; else a command at a time, up to the first it refuses.
            if let prepared = decoded.prepared, try batch.appendPrepared(prepared) {
                if let sorted = decoded.sortedChanges {
                    try state.apply(sorted, in: batch.state)
                } else {
                    try state.apply(decoded.changes, at: 0..<decoded.changes.count, in: batch.state)
                }
                return nil
            }
            var refusal: EventLogError?
            try decoded.forEachCommand { events, changeOffsets in
                guard refusal == nil else { return }
                do {
                    try batch.appendRecorded(Array(events))
                } catch let error as EventLogError {
                    refusal = error
                    return
                }
                try state.apply(decoded.changes, at: changeOffsets, in: batch.state)
            }
            return refusal
        }
        handed.decoded = nil
        if let refusal { throw refusal }
        if let undecodable = decoded.undecodable { throw undecodable }
    }

    /// Writes what is held, if anything, and holds nothing from then on: call it once the last batch is appended, or
    /// once the import stops; the log is not complete until it returns.
    public func finish() async throws {
        let index = held.index
        guard let changes = held.stopHolding(), index.eventCount > 0 else { return }
        let state = self.state
        // The changes sorted on another core while the index is written. Two writes: a log that has its index but
        // not its state's stamp has the state folded again, as after a stop before either.
        let sorting = Task { DecisionState.SortedHeldChanges(changes) }
        try await log.append(.nonDurableBulkImport, eventCount: 0) { batch in try batch.writeIndex(heldIn: index) }
        index.removeAll()
        let sorted = await sorting.value
        try await log.append(.nonDurableBulkImport, eventCount: 0) { batch in
            try state.append(sorted, to: batch.state)
            try DecisionStateUpgrade.stamp(in: batch.state, state: state)
        }
    }

    /// Appends a batch's records, its index entries and changes held, when the import holds them (it began with an
    /// empty log) and the batch goes in whole and in key order; false, having appended nothing, otherwise. An
    /// account's deletion, whose changes remove the e-mail entries holding its id, has them resolved against the
    /// changes held first.
    private func appendHolding(_ handed: HandedBatch) async throws -> Bool {
        guard let decoded = handed.decoded, let prepared = decoded.prepared,
            let sorted = decoded.sortedChanges ?? held.sortedResolvingRemovalsByValue(in: decoded.changes),
            held.mayHold(prepared, sorted, startingAt: log.head)
        else { return false }
        let index = held.index
        let appended = try await log.append(.nonDurableBulkImport, eventCount: prepared.eventCount) { batch in
            guard let prepared = handed.decoded?.prepared else { return false }
            return try batch.appendPrepared(prepared, holdingIndexIn: index)
        }
        guard appended else { return false }
        index.add(prepared)
        held.add(sorted)
        return true
    }
}

extension RecordedEventImporter {
    /// What an import holds to write at its end: whether it holds (decided with its first batch: only into an empty
    /// log), and the decision-state changes held; the index entries are held by the log's ``HeldImportIndex``.
    private final class Held: Sendable {
        let index = HeldImportIndex(maximumEvents: RecordedEventImporter.maximumHeldEvents)
        private let state = Mutex(HeldState())

        private struct HeldState {
            /// Nil until the first batch; false once the import stopped holding, for good.
            var holds: Bool?
            var changes = DecisionState.HeldChanges()
        }

        /// Whether the import holds, or has not decided yet (before its first batch): its batches' index entries are
        /// prepared for holding then.
        var mayStillHold: Bool { state.withLock { $0.holds != false } }

        /// Whether a batch may be held, the log's head being `head`: not past ``maximumHeldEvents`` or
        /// ``maximumHeldBatches``, nor past what ``DecisionState/HeldChanges`` can take. The first batch decides
        /// whether the import holds at all.
        func mayHold(
            _ prepared: PreparedRecordedEvents, _ sorted: DecisionState.SortedChanges, startingAt head: LogPosition
        ) -> Bool {
            state.withLock { state in
                if state.holds == nil { state.holds = head == .start }
                return state.holds == true
                    && index.eventCount + prepared.eventCount <= RecordedEventImporter.maximumHeldEvents
                    && index.batchCount < RecordedEventImporter.maximumHeldBatches && state.changes.canAdd(sorted)
            }
        }

        /// `changes` sorted, their removals of the entries holding a value (an account's deletion) resolved against
        /// the changes held (``DecisionState/HeldChanges/resolvingRemovalsByValue(in:)``); nil once the import no
        /// longer holds.
        func sortedResolvingRemovalsByValue(in changes: DecisionState.ChangeList) -> DecisionState.SortedChanges? {
            state.withLock { state in
                state.holds == false
                    ? nil : DecisionState.SortedChanges(state.changes.resolvingRemovalsByValue(in: changes))
            }
        }

        func add(_ sorted: DecisionState.SortedChanges) {
            state.withLock { state in state.changes.add(sorted) }
        }

        /// Stops holding; returns the changes held, if it held.
        func stopHolding() -> DecisionState.HeldChanges? {
            state.withLock { state in
                defer { (state.holds, state.changes) = (false, DecisionState.HeldChanges()) }
                return state.holds == true ? state.changes : nil
            }
        }
    }
}

/// A batch handed to the log's writer, and emptied by the appending task once the writer is done with it: the batch
/// (a few thousand events and their changes) is then freed on that task's thread, not on the writer's, which is an
/// import's bottleneck.
private final class HandedBatch: @unchecked Sendable {
    /// Read by the writer's closure, then set to nil once the append has returned: never at once.
    var decoded: RecordedEventImporter.Decoded?

    init(_ decoded: RecordedEventImporter.Decoded) { self.decoded = decoded }
}
