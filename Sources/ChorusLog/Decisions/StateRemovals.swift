import Synchronization

/// For each state table, the newest commit of this process's writer that removed a key from it: an answer read from
/// the state at that position or later still holds for every key it found there, as long as the table's values are
/// never replaced in place (``EventLog/newestRemoval(from:)``). Lets a caller keep what it found (a session) instead of
/// reading the state again for every request.
///
/// Recorded after the commit and before its position is published, so whoever learns that a removal is done also
/// finds it here; a read taken before that commit saw an older position, and what it found no longer counts.
package final class StateRemovals: Sendable {
    private struct State {
        /// The head when the log was opened: removals before it are unknown, so nothing read before it counts.
        let floor: LogPosition
        var newest: [StateTable: LogPosition] = [:]
    }

    private let state: Mutex<State>

    package init(openedAt head: LogPosition) {
        state = Mutex(State(floor: head))
    }

    /// Records that the commit ending at `head` removed keys from `tables`.
    package func record(_ tables: Set<StateTable>, at head: LogPosition) {
        guard !tables.isEmpty else { return }
        state.withLock { state in
            for table in tables { state.newest[table] = head }
        }
    }

    package func newest(in table: StateTable) -> LogPosition {
        state.withLock { $0.newest[table] ?? $0.floor }
    }
}
