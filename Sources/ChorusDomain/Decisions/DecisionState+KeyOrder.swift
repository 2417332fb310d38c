import ChorusLog
import ChorusStorage

/// A batch's changes written table by table in key order, as an import writes them: in the order the events came,
/// nearly every change was a search from a table's root and a page somewhere else in it (about half of the writer's
/// time). The task that decodes a batch sorts it; the writer only walks the order.
extension DecisionState {
    /// A batch's changes in the order to write them: by table, then key, then the order they came in, so that the
    /// last change to a key still wins. The entries are sorted; the keys and values stay where the changes were made,
    /// back to back in the order they came (the order they lie in memory).
    struct SortedChanges: Sendable {
        struct Entry: Sendable {
            /// The key's first bytes, which tell nearly every two keys apart without reading them.
            let prefix: KeyOrder.Prefix
            let keyStart: Int32
            let keyCount: Int32
            /// -1: the key is removed; else the value follows the key in ``bytes``.
            let valueCount: Int32
            /// The table's place in ``DecisionState/tableNames``.
            let place: UInt8

            /// Its key and value (nil: the key is removed) in the list's bytes.
            func change(in bytes: UnsafeRawBufferPointer) -> (
                key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer?
            ) {
                ChangeList.change(in: bytes, keyStart: Int(keyStart), keyCount: keyCount, valueCount: valueCount)
            }
        }

        let entries: [Entry]
        let bytes: [UInt8]

        /// Nil when one of `changes` removes entries by their value (an account's deletion), which must come exactly
        /// where it is.
        init?(_ changes: ChangeList) {
            guard changes.bytes.count <= Int(Int32.max) else { return nil }
            // Table by table (a count of each, then each change in its table's place), then each table by key: the
            // sort is stable, so that changes to one key stay in the order they came.
            var tableEnds = [Int](repeating: 0, count: DecisionState.tableNames.count)
            for change in changes.entries {
                guard !change.removesEntriesHolding else { return nil }
                tableEnds[Int(change.place)] += 1
            }
            var next = [Int](repeating: 0, count: tableEnds.count)
            for place in tableEnds.indices.dropFirst() {
                next[place] = tableEnds[place - 1]
                tableEnds[place] += tableEnds[place - 1]
            }
            entries = changes.bytes.withUnsafeBytes { bytes in
                func key(_ entry: Entry) -> UnsafeRawBufferPointer { entry.change(in: bytes).key }
                // Every place is written once: each table's count of them.
                return [Entry](unsafeUninitializedCapacity: changes.count) { entries, initialized in
                    for change in changes.entries {
                        let key = change.change(in: bytes).key
                        (entries.baseAddress! + next[Int(change.place)]).initialize(
                            to: Entry(
                                prefix: KeyOrder.Prefix(key), keyStart: Int32(change.keyStart),
                                keyCount: change.keyCount, valueCount: change.valueCount, place: change.place))
                        next[Int(change.place)] += 1
                    }
                    initialized = changes.count
                    var start = 0
                    for end in tableEnds {
                        var table = UnsafeMutableBufferPointer(rebasing: entries[start..<end])
                        table.sort { a, b in KeyOrder.precedes(a.prefix, b.prefix) { (key(a), key(b)) } }
                        start = end
                    }
                }
            }
            bytes = changes.bytes
        }
    }

    /// Records `sorted`, each table's changes through ``StateWriter/writeInKeyOrder(in:_:)``.
    func apply(_ sorted: SortedChanges, in state: some StateWriter) throws {
        try sorted.bytes.withUnsafeBytes { bytes in
            var start = sorted.entries.startIndex
            while start < sorted.entries.endIndex {
                let place = sorted.entries[start].place
                var end = start + 1
                while end < sorted.entries.endIndex, sorted.entries[end].place == place { end += 1 }
                try state.writeInKeyOrder(in: ChangeList.table(at: place)) { write in
                    for entry in sorted.entries[start..<end] {
                        let (key, value) = entry.change(in: bytes)
                        try write(key, value)
                    }
                }
                start = end
            }
        }
    }
}
