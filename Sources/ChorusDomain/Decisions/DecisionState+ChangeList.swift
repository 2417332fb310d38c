import ChorusLog

extension DecisionState {
    /// The changes events make to the state (``appendChanges(for:at:to:)``), in the order they come: each a value put
    /// under a key, a key removed, or every entry of a table holding a value removed. Their keys and values are
    /// written back to back into one buffer as they are made: an import's batch holds tens of thousands, and with an
    /// array for each change's key and value they were two of every ten allocations an import made, copied once more
    /// to be sorted (``SortedChanges`` now sorts the entries and reads the same bytes).
    struct ChangeList: Sendable {
        struct Entry: Sendable {
            let keyStart: Int
            let keyCount: Int32
            /// -1: the key is removed; else the value follows the key in ``bytes``.
            let valueCount: Int32
            /// The table's place in ``DecisionState/tableNames``.
            let place: UInt8
            /// Set: instead, every entry of the table holding the value (the key is empty) is removed. For the e-mail
            /// index, whose key an erased account's events no longer give (their e-mail is unreadable).
            let removesEntriesHolding: Bool

            /// Its key and value (nil: the key is removed) in the list's bytes.
            func change(in bytes: UnsafeRawBufferPointer) -> (
                key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer?
            ) {
                ChangeList.change(in: bytes, keyStart: keyStart, keyCount: keyCount, valueCount: valueCount)
            }
        }

        /// A key: one part, or two with a NUL between them (``DecisionState/key(_:_:)``).
        struct Key {
            let first: String
            let second: String?

            init(_ first: String, _ second: String? = nil) { (self.first, self.second) = (first, second) }
        }

        private(set) var entries: [Entry] = []
        private(set) var bytes: [UInt8] = []

        var count: Int { entries.count }

        /// `expected` changes of about `bytesEach` bytes will be appended.
        mutating func reserveCapacity(_ expected: Int, bytesEach: Int) {
            entries.reserveCapacity(expected)
            bytes.reserveCapacity(expected * bytesEach)
        }

        /// Puts what `value` appends to the bytes.
        mutating func put(_ table: StateTable, _ key: Key, appendingValue value: (inout [UInt8]) -> Void) {
            append(table, key, removed: false, value: value)
        }

        mutating func put(_ table: StateTable, _ key: Key, _ value: UnsafeRawBufferPointer) {
            put(table, key) { $0.append(contentsOf: value) }
        }

        mutating func put(_ table: StateTable, _ key: Key, _ value: [UInt8]) {
            put(table, key) { $0 += value }
        }

        /// Puts a string's UTF-8 bytes.
        mutating func put(_ table: StateTable, _ key: Key, text: String) {
            put(table, key) { $0.appendUTF8(of: text) }
        }

        /// Puts a position as an edge keeps it (``Edge``).
        mutating func put(_ table: StateTable, _ key: Key, since position: LogPosition) {
            withUnsafeBytes(of: position.rawValue.bigEndian) { put(table, key, $0) }
        }

        mutating func remove(_ table: StateTable, _ key: Key) {
            append(table, key, removed: true) { _ in }
        }

        /// Removes every entry of `table` that holds `value`'s UTF-8 bytes.
        mutating func removeEntries(of table: StateTable, holding value: String) {
            let start = bytes.count
            bytes.appendUTF8(of: value)
            entries.append(
                Entry(
                    keyStart: start, keyCount: 0, valueCount: Int32(bytes.count - start), place: Self.place(of: table),
                    removesEntriesHolding: true))
        }

        /// Appends a change of `key` in the table at `place` (in ``DecisionState/tableNames``): `value` put under it,
        /// or the key removed when nil; the bytes as they are.
        mutating func append(place: UInt8, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer?) {
            append(
                place: place, removed: value == nil, value: { if let value { $0.append(contentsOf: value) } },
                key: { $0.append(contentsOf: key) })
        }

        /// Drops every change, keeping the memory for the next ones.
        mutating func removeAll() { keepFirst(0) }

        /// Drops the changes from the `count`th on: those of events that did not decode.
        mutating func keepFirst(_ count: Int) {
            guard count < entries.count else { return }
            bytes.removeSubrange(entries[count].keyStart...)
            entries.removeSubrange(count...)
        }

        /// Calls `body` with the changes at `offsets` in order: each one's table, key, and value (nil: the key is
        /// removed). An entry that removes entries by value has an empty key and `removesEntriesHolding` set.
        func forEachChange(
            in offsets: Range<Int>,
            _ body: (_ change: Entry, _ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer?) throws -> Void
        ) rethrows {
            try bytes.withUnsafeBytes { bytes in
                for entry in entries[offsets] {
                    let (key, value) = entry.change(in: bytes)
                    try body(entry, key, value)
                }
            }
        }

        func forEachChange(
            _ body: (_ change: Entry, _ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer?) throws -> Void
        ) rethrows {
            try forEachChange(in: entries.indices, body)
        }

        /// The key and the value (nil: the key is removed) of a change whose key starts at `keyStart` in `bytes`: its
        /// value follows it. How ``SortedChanges`` reads the same bytes, too.
        static func change(
            in bytes: UnsafeRawBufferPointer, keyStart: Int, keyCount: Int32, valueCount: Int32
        ) -> (key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer?) {
            let keyEnd = keyStart + Int(keyCount)
            return (
                UnsafeRawBufferPointer(rebasing: bytes[keyStart..<keyEnd]),
                valueCount < 0 ? nil : UnsafeRawBufferPointer(rebasing: bytes[keyEnd..<keyEnd + Int(valueCount)])
            )
        }

        /// Appends a change of `key` in `table`: what `value` appends is put under it, or the key is removed.
        private mutating func append(
            _ table: StateTable, _ key: Key, removed: Bool, value: (inout [UInt8]) -> Void
        ) {
            append(place: Self.place(of: table), removed: removed, value: value) { bytes in
                bytes.appendUTF8(of: key.first)
                if let second = key.second {
                    bytes.append(0)
                    bytes.appendUTF8(of: second)
                }
            }
        }

        /// Appends a change, in the table at `place`, of the key `key` appends: what `value` appends is put under it,
        /// or the key is removed.
        private mutating func append(
            place: UInt8, removed: Bool, value: (inout [UInt8]) -> Void, key: (inout [UInt8]) -> Void
        ) {
            let start = bytes.count
            key(&bytes)
            let keyEnd = bytes.count
            value(&bytes)
            precondition(bytes.count - start <= Int32.max, "a decision-state change over 2 GiB")
            entries.append(
                Entry(
                    keyStart: start, keyCount: Int32(keyEnd - start),
                    valueCount: removed ? -1 : Int32(bytes.count - keyEnd), place: place,
                    removesEntriesHolding: false))
        }

        /// The tables by their place in ``DecisionState/tableNames``: the order sorted changes come in.
        private static let placeOfTable = Dictionary(
            uniqueKeysWithValues: DecisionState.tableNames.enumerated().map { ($1, UInt8($0)) })

        private static func place(of table: StateTable) -> UInt8 {
            guard let place = placeOfTable[table.name] else {
                preconditionFailure("\(table) is not a decision-state table")
            }
            return place
        }

        static func table(at place: UInt8) -> StateTable { StateTable(DecisionState.tableNames[Int(place)]) }
    }
}
