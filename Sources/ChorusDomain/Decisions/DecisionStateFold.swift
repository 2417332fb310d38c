import ChorusLog
import ChorusText

/// The decision state recomputed from the events: the log folded through ``DecisionState/changes(for:at:)``, table by
/// table, as `chorus log verify` compares it and ``DecisionStateUpgrade`` writes it.
struct DecisionStateFold {
    /// Table name → key → the value the events leave there, and the position of the event that left it.
    private(set) var expected: [String: [[UInt8]: (value: [UInt8], position: LogPosition)]] = [:]
    /// The last position folded in.
    private(set) var folded = LogPosition.start
    private let state = DecisionState()

    /// Folds in the events after ``folded`` through `head`; `progress` gets the position folded and the head.
    mutating func fold(
        _ log: any EventLog, keys: any PersonalDataKeys, through head: LogPosition,
        progress: (LogPosition, LogPosition) -> Void
    ) throws {
        guard head > folded else { return }
        var seen = 0
        // One list for every event's changes, emptied before the next.
        var changes = DecisionState.ChangeList()
        try log.scan(from: folded.next, through: head) { event in
            changes.removeAll()
            state.appendChanges(for: try DomainEvent(decoding: event, keys: keys), at: event.position, to: &changes)
            changes.forEachChange { change, key, value in
                let table = DecisionState.ChangeList.table(at: change.place).name
                if change.removesEntriesHolding, let held = value {
                    expected[table] = expected[table]?.filter { !$0.value.value.elementsEqual(held) }
                } else if let value {
                    expected[table, default: [:]][Array(key)] = (Array(value), event.position)
                } else {
                    expected[table]?[Array(key)] = nil
                }
            }
            folded = event.position
            seen += 1
            if seen % 65_536 == 0 { progress(folded, head) }
        }
        progress(folded, head)
    }

    /// The entries of `table`, in key order (LMDB's byte order).
    func entries(of table: StateTable) -> [(key: [UInt8], value: [UInt8], position: LogPosition)] {
        (expected[table.name] ?? [:]).map { ($0.key, $0.value.value, $0.value.position) }
            .sorted { KeyOrder.precedes($0.key, $1.key) }
    }
}
