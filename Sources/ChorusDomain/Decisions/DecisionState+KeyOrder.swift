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
            let keyStart: Int
            let keyCount: Int32
            /// -1: the key is removed; else the value follows the key in ``bytes``.
            let valueCount: Int32
            /// Where the change came in its batch.
            let index: Int32
            /// The table's place in ``DecisionState/tableNames``.
            let place: UInt8
        }

        let entries: [Entry]
        let bytes: [UInt8]

        /// Nil when one of `changes` removes entries by their value (an account's deletion), which must come exactly
        /// where it is.
        init?(_ changes: ChangeList) {
            guard changes.count <= Int(Int32.max) else { return nil }
            var entries: [Entry] = []
            entries.reserveCapacity(changes.count)
            var index: Int32 = 0
            let complete: Bool = changes.bytes.withUnsafeBytes { bytes in
                for change in changes.entries {
                    guard !change.removesEntriesHolding else { return false }
                    let key = UnsafeRawBufferPointer(
                        rebasing: bytes[change.keyStart..<change.keyStart + Int(change.keyCount)])
                    entries.append(
                        Entry(
                            prefix: KeyOrder.Prefix(key), keyStart: change.keyStart, keyCount: change.keyCount,
                            valueCount: change.valueCount, index: index, place: change.place))
                    index += 1
                }
                entries.sort { a, b in
                    if a.place != b.place { return a.place < b.place }
                    if a.prefix != b.prefix { return a.prefix < b.prefix }
                    let order = KeyOrder.compare(
                        UnsafeRawBufferPointer(rebasing: bytes[a.keyStart..<a.keyStart + Int(a.keyCount)]),
                        UnsafeRawBufferPointer(rebasing: bytes[b.keyStart..<b.keyStart + Int(b.keyCount)]))
                    return order != 0 ? order < 0 : a.index < b.index
                }
                return true
            }
            guard complete else { return nil }
            (self.entries, self.bytes) = (entries, changes.bytes)
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
                        let keyEnd = entry.keyStart + Int(entry.keyCount)
                        try write(
                            UnsafeRawBufferPointer(rebasing: bytes[entry.keyStart..<keyEnd]),
                            entry.valueCount < 0
                                ? nil : UnsafeRawBufferPointer(rebasing: bytes[keyEnd..<keyEnd + Int(entry.valueCount)])
                        )
                    }
                }
                start = end
            }
        }
    }
}
