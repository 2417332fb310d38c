import ChorusText

/// Finds the type of event a log's type name stores (``DomainEvent/storedTypes``). A table of its own: a `switch` over
/// the names compares the name with each in turn, and a dictionary hashes every name through SipHash.
enum StoredEventNames {
    /// The type stored under `name`; nil for a name no Chorus wrote.
    static func type(named name: String) -> (any StoredEvent.Type)? {
        name.withBorrowedUTF8 { table.type(named: $0) }
    }

    private static let table = NameTable(DomainEvent.storedTypes)

    /// The types by name, open-addressed: a slot from the name's length and two of its bytes (which tell nearly every
    /// two names apart), then the names from there on compared until one matches or a slot is empty.
    private struct NameTable: Sendable {
        private static let size = 128
        private var slots: [(type: any StoredEvent.Type, name: [UInt8])?] = Array(repeating: nil, count: size)

        init(_ types: [any StoredEvent.Type]) {
            precondition(types.count <= Self.size / 2, "more event types than the name table holds")
            for type in types {
                let name = Array(type.typeName.utf8)
                var slot = name.withUnsafeBufferPointer(Self.slot(of:))
                while let taken = slots[slot] {
                    precondition(taken.name != name, "two event types stored as \(type.typeName)")
                    slot = (slot + 1) & (Self.size - 1)
                }
                slots[slot] = (type, name)
            }
        }

        func type(named name: UnsafeBufferPointer<UInt8>) -> (any StoredEvent.Type)? {
            var slot = Self.slot(of: name)
            while let entry = slots[slot] {
                if entry.name.withUnsafeBufferPointer({ $0.elementsEqual(name) }) { return entry.type }
                slot = (slot + 1) & (Self.size - 1)
            }
            return nil
        }

        private static func slot(of name: UnsafeBufferPointer<UInt8>) -> Int {
            guard let first = name.first else { return 0 }
            return (name.count &* 8 &+ Int(first) &* 4 &+ Int(name[min(4, name.count - 1)])) & (size - 1)
        }
    }
}
