import ChorusLog
import ChorusStorage

/// A batch's changes written table by table in key order, as an import writes them: in the order the events came,
/// nearly every change was a search from a table's root and a page somewhere else in it (about half of the writer's
/// time). The task that decodes a batch sorts it; the writer only walks the order.
extension DecisionState {
    /// The tables by their place in ``tableNames``: the order sorted changes come in.
    private static let placeOfTable = Dictionary(
        uniqueKeysWithValues: tableNames.enumerated().map { ($1, UInt8($0)) })

    /// The order to write `changes` in: by table, then key, then the order they came in, so that the last change to
    /// a key still wins. Nil when one of them removes entries by their value (an account's deletion), which must come
    /// exactly where it is.
    static func keyOrder(of changes: [Change]) -> [Int32]? {
        guard changes.count <= Int(Int32.max) else { return nil }
        // Keys copied back to back, so that comparing two retains nothing.
        var keys: [UInt8] = []
        var entries: [(place: UInt8, start: Int, count: Int, index: Int32)] = []
        entries.reserveCapacity(changes.count)
        for (index, change) in changes.enumerated() {
            guard change.removingEntriesHolding == nil, let place = placeOfTable[change.table.name] else { return nil }
            entries.append((place, keys.count, change.key.count, Int32(index)))
            keys.append(contentsOf: change.key)
        }
        keys.withUnsafeBytes { keys in
            entries.sort { a, b in
                if a.place != b.place { return a.place < b.place }
                let order = KeyOrder.compare(
                    UnsafeRawBufferPointer(rebasing: keys[a.start..<a.start + a.count]),
                    UnsafeRawBufferPointer(rebasing: keys[b.start..<b.start + b.count]))
                return order != 0 ? order < 0 : a.index < b.index
            }
        }
        return entries.map(\.index)
    }

    /// Records `changes` in `order` (``keyOrder(of:)``), each table's through ``StateWriter/writeInKeyOrder(in:_:)``.
    func apply(_ changes: [Change], inKeyOrder order: [Int32], in state: some StateWriter) throws {
        var start = order.startIndex
        while start < order.endIndex {
            let table = changes[Int(order[start])].table
            var end = start + 1
            while end < order.endIndex, changes[Int(order[end])].table == table { end += 1 }
            try state.writeInKeyOrder(in: table) { write in
                for index in order[start..<end] {
                    let change = changes[Int(index)]
                    try write(change.key, change.value)
                }
            }
            start = end
        }
    }
}
