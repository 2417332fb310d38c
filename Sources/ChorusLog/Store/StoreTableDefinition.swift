import CLMDB

/// A table of a ``KeyValueStore``: its name and how it holds its entries.
public struct StoreTableDefinition: Sendable, Hashable, ExpressibleByStringLiteral {
    public enum Layout: Sendable, Hashable {
        /// One value per key.
        case keyValue
        /// Under each key a sorted set of elements of one fixed size, stored back to back with no per-element
        /// overhead (LMDB's `MDB_DUPSORT | MDB_DUPFIXED`): for long per-owner lists such as feeds, where each entry
        /// is small and most writes append to the end of one owner's list.
        case sortedSets(elementSize: Int)
    }

    public let name: String
    public let layout: Layout

    public init(_ name: String, layout: Layout = .keyValue) {
        precondition(!name.isEmpty, "a table needs a name")
        if case .sortedSets(let size) = layout {
            precondition((1...StoreTransaction.maximumKeySize).contains(size), "set elements hold 1 to 511 bytes")
        }
        self.name = name
        self.layout = layout
    }

    public init(stringLiteral name: String) { self.init(name) }

    var lmdbDefinition: LMDBEnvironment.DatabaseDefinition {
        switch layout {
        case .keyValue: .init(name: name)
        case .sortedSets: .init(name: name, flags: UInt32(MDB_DUPSORT | MDB_DUPFIXED))
        }
    }
}
