import ChorusLog

/// What each event changes in the decision state (``StoredEvent/changeState(_:at:in:)``, beside each event), and
/// applying it: the one place the state follows from the events, for the command path, the importer and the audit.
extension DecisionState {
    /// What `event`, appended at `position`, changes in the state. The command path applies it in the append's own
    /// transaction; ``DecisionStateAudit`` folds the whole log through it to recompute the state.
    func changes(for event: DomainEvent, at position: LogPosition) -> ChangeList {
        var changes = ChangeList()
        appendChanges(for: event, at: position, to: &changes)
        return changes
    }

    /// ``changes(for:at:)``, appended to `changes`: an import collects a whole batch's changes in one list.
    func appendChanges(for event: DomainEvent, at position: LogPosition, to changes: inout ChangeList) {
        event.stored.changeState(self, at: position, in: &changes)
    }

    /// Records what `event`, appended at `position`, changes in the state; called in the same transaction.
    func apply(_ event: DomainEvent, at position: LogPosition, in state: some StateWriter) throws {
        let changes = changes(for: event, at: position)
        try apply(changes, at: 0..<changes.count, in: state)
    }

    /// Records the changes of `changes` at `offsets` (of events appended in the same transaction).
    func apply(_ changes: ChangeList, at offsets: Range<Int>, in state: some StateWriter) throws {
        try changes.forEachChange(in: offsets) { change, key, value in
            let table = ChangeList.table(at: change.place)
            if change.removesEntriesHolding, let held = value {
                // A scan of the table: an account deletion is rare, and already scans the tables it empties.
                var holding: [[UInt8]] = []
                try state.forEach(in: table) { key, value in
                    if value.elementsEqual(held) { holding.append(Array(key)) }
                    return true
                }
                for key in holding { try state.delete(key, in: table) }
            } else if let value {
                try state.put(Array(value), for: Array(key), in: table)
            } else {
                try state.delete(Array(key), in: table)
            }
        }
    }
}
