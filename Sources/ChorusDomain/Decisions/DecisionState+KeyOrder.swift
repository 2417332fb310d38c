import ChorusLog
import ChorusText

/// A batch's changes written table by table in key order, as an import writes them: in the order the events came,
/// nearly every change was a search from a table's root and a page somewhere else in it (about half of the writer's
/// time). The task that decodes a batch sorts it; the writer only walks the order.
extension DecisionState {
    /// A batch's changes in the order to write them: by table, then key, then the order they came in, so that the
    /// last change to a key still wins. The entries are sorted, then the keys and values copied in their order: an
    /// import's end merges the batches held and writes their keys in that order, and read where they were made, each
    /// key was a miss of the processor's caches (its state's write, on one core, took twice as long); a batch's bytes,
    /// copied while they are in the caches, cost little.
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
            guard !changes.entries.contains(where: \.removesEntriesHolding) else { return nil }
            let (starts, tableEnds) = Self.tablePlaces(changes.entries.lazy.map(\.place))
            var next = starts
            (entries, bytes) = changes.bytes.withUnsafeBytes { bytes in
                // Every place is written once: each table's count of them.
                let sorted = [Entry](unsafeUninitializedCapacity: changes.count) { entries, initialized in
                    for change in changes.entries {
                        let key = change.change(in: bytes).key
                        (entries.baseAddress! + next[Int(change.place)]).initialize(
                            to: Entry(
                                prefix: KeyOrder.Prefix(key), keyStart: Int32(change.keyStart),
                                keyCount: change.keyCount, valueCount: change.valueCount, place: change.place))
                        next[Int(change.place)] += 1
                    }
                    initialized = changes.count
                    Self.sortEachTable(entries, endingAt: tableEnds, keysIn: bytes)
                }
                return Self.laidOut(sorted, from: bytes)
            }
        }

        /// Where each table's entries begin and end once entries of tables at `places` are placed table by table.
        static func tablePlaces(_ places: some Sequence<UInt8>) -> (starts: [Int], ends: [Int]) {
            var ends = [Int](repeating: 0, count: DecisionState.tableNames.count)
            for place in places { ends[Int(place)] += 1 }
            var starts = [Int](repeating: 0, count: ends.count)
            for place in ends.indices.dropFirst() {
                starts[place] = ends[place - 1]
                ends[place] += ends[place - 1]
            }
            return (starts, ends)
        }

        /// Sorts each table's entries, which end at `tableEnds`, by key (their keys in `bytes`). A stable sort, which
        /// keeps each key's changes in the order they came, and finds runs already sorted and merges them.
        static func sortEachTable(
            _ entries: UnsafeMutableBufferPointer<Entry>, endingAt tableEnds: [Int],
            keysIn bytes: UnsafeRawBufferPointer
        ) {
            func key(_ entry: Entry) -> UnsafeRawBufferPointer { entry.change(in: bytes).key }
            var start = 0
            for end in tableEnds {
                var table = UnsafeMutableBufferPointer(rebasing: entries[start..<end])
                table.sort { a, b in KeyOrder.precedes(a.prefix, b.prefix) { (key(a), key(b)) } }
                start = end
            }
        }

        /// `entries` with their keys and values copied from `source` into one buffer, in the entries' order.
        private static func laidOut(_ entries: [Entry], from source: UnsafeRawBufferPointer) -> ([Entry], [UInt8]) {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(source.count)
            let placed = entries.map { entry in
                let start = Int(entry.keyStart)
                let end = start + Int(entry.keyCount) + max(0, Int(entry.valueCount))
                let placed = Entry(
                    prefix: entry.prefix, keyStart: Int32(bytes.count), keyCount: entry.keyCount,
                    valueCount: entry.valueCount, place: entry.place)
                bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: source[start..<end]))
                return placed
            }
            return (placed, bytes)
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

extension DecisionState {
    /// Batches' ``SortedChanges`` held to be written at once into tables that hold nothing yet: an import into an
    /// empty log (``RecordedEventImporter``).
    struct HeldChanges: Sendable {
        fileprivate private(set) var batches: [SortedChanges] = []
        fileprivate private(set) var byteCount = 0
        fileprivate private(set) var entryCount = 0

        /// Whether `sorted` can be held: the places of keys are kept below 2 GiB once the batches' bytes are joined.
        func canAdd(_ sorted: SortedChanges) -> Bool { byteCount + sorted.bytes.count <= Int(Int32.max) }

        mutating func add(_ sorted: SortedChanges) {
            precondition(canAdd(sorted), "more than 2 GiB of decision-state changes held")
            batches.append(sorted)
            byteCount += sorted.bytes.count
            entryCount += sorted.entries.count
        }

        /// `changes`, a batch's to hold after these, with each removal of the entries holding a value (an account's
        /// deletion removes its e-mail so) made the removals of the keys holding it then: those whose last change,
        /// held or earlier in the batch, put that value. Held, the table is not there to look in.
        func resolvingRemovalsByValue(in changes: ChangeList) -> ChangeList {
            var resolved = ChangeList()
            resolved.reserveCapacity(changes.count, bytesEach: 64)
            changes.forEachChange { change, key, value in
                guard change.removesEntriesHolding, let value else {
                    resolved.append(place: change.place, key: key, value: value)
                    return
                }
                for key in keys(holding: value, in: change.place, then: resolved) {
                    key.withUnsafeBytes { resolved.append(place: change.place, key: $0, value: nil) }
                }
            }
            return resolved
        }

        /// The keys of the table at `place` whose last change, in the batches held and then in `batch`, put `value`.
        private func keys(holding value: UnsafeRawBufferPointer, in place: UInt8, then batch: ChangeList) -> [[UInt8]] {
            // Every change to the table, in the order they came (each held batch's in key order, which keeps each
            // key's in the order they came).
            func forEachChange(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer?) -> Void) {
                for held in batches {
                    held.bytes.withUnsafeBytes { bytes in
                        for entry in held.entries[Self.range(of: place, in: held.entries)] {
                            let (key, value) = entry.change(in: bytes)
                            body(key, value)
                        }
                    }
                }
                batch.forEachChange { change, key, value in
                    if change.place == place, !change.removesEntriesHolding { body(key, value) }
                }
            }
            var candidates: [[UInt8]] = []
            forEachChange { key, put in
                if put?.elementsEqual(value) == true, !candidates.contains(where: { $0.elementsEqual(key) }) {
                    candidates.append(Array(key))
                }
            }
            return candidates.filter { candidate in
                var holds = false
                forEachChange { key, put in
                    if key.elementsEqual(candidate) { holds = put?.elementsEqual(value) == true }
                }
                return holds
            }
        }

        /// Where the entries of the table at `place` are in `entries`, which come table by table.
        private static func range(of place: UInt8, in entries: [SortedChanges.Entry]) -> Range<Int> {
            /// The first entry of the table at `place` or after it.
            func start(of place: Int) -> Int {
                var (low, high) = (0, entries.count)
                while low < high {
                    let middle = (low + high) / 2
                    if Int(entries[middle].place) < place { low = middle + 1 } else { high = middle }
                }
                return low
            }
            return start(of: Int(place))..<start(of: Int(place) + 1)
        }
    }

    /// ``HeldChanges`` made ready to write: the batches' bytes joined in one buffer, the places of their keys moved
    /// past the bytes before them, so that every key is read from the one buffer; and their entries in one array,
    /// table by table, each table's sorted by key. Made once, each its full size: grown batch by batch, they were
    /// copied again and again.
    struct SortedHeldChanges: Sendable {
        let entries: [SortedChanges.Entry]
        let bytes: [UInt8]
        /// Where each table's entries end, by the tables' places.
        let tableEnds: [Int]

        init(_ held: HeldChanges) {
            let (starts, tableEnds) = SortedChanges.tablePlaces(held.batches.lazy.flatMap(\.entries).map(\.place))
            var next = starts
            var bytes: [UInt8] = []
            bytes.reserveCapacity(held.byteCount)
            // Each table's in the order the batches came.
            var entries = [SortedChanges.Entry](unsafeUninitializedCapacity: held.entryCount) { entries, initialized in
                for batch in held.batches {
                    let shift = Int32(bytes.count)
                    for entry in batch.entries {
                        (entries.baseAddress! + next[Int(entry.place)]).initialize(
                            to: SortedChanges.Entry(
                                prefix: entry.prefix, keyStart: entry.keyStart + shift, keyCount: entry.keyCount,
                                valueCount: entry.valueCount, place: entry.place))
                        next[Int(entry.place)] += 1
                    }
                    bytes += batch.bytes
                }
                initialized = held.entryCount
            }
            // The batches' runs, each sorted already, merged.
            bytes.withUnsafeBytes { bytes in
                entries.withUnsafeMutableBufferPointer { entries in
                    SortedChanges.sortEachTable(entries, endingAt: tableEnds, keysIn: bytes)
                }
            }
            (self.entries, self.bytes, self.tableEnds) = (entries, bytes, tableEnds)
        }
    }

    /// Records `sorted` into tables that hold nothing yet: table by table in key order, each key's last change
    /// appended (``StateWriter/appendInKeyOrder(in:_:)``); a key whose last change removes it is not written at all.
    func append(_ sorted: SortedHeldChanges, to state: some StateWriter) throws {
        try sorted.bytes.withUnsafeBytes { bytes in
            try sorted.entries.withUnsafeBufferPointer { entries in
                var start = 0
                for (place, end) in sorted.tableEnds.enumerated() where start < end {
                    try state.appendInKeyOrder(in: ChangeList.table(at: UInt8(place))) { append in
                        for offset in start..<end {
                            // Only a key's last change counts.
                            let (key, value) = entries[offset].change(in: bytes)
                            if offset + 1 < end, entries[offset + 1].prefix == entries[offset].prefix,
                                KeyOrder.compare(key, entries[offset + 1].change(in: bytes).key) == 0
                            {
                                continue
                            }
                            if let value { try append(key, value) }
                        }
                    }
                    start = end
                }
            }
        }
    }
}
