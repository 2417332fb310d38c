import Glibc

/// Streams' names as UTF-8 bytes back to back, each found again from its bytes through an open-addressed table of
/// their hashes: the name's place, 0 for the first name met. A dictionary keyed by the streams retained each new one,
/// and hashed and compared it as a String, for every event of an import.
package struct StreamNameTable {
    /// A slot holds its name's place + 1, or 0 when empty; at most half full, so that a probe meets an empty slot soon.
    private var slots: [Int]
    /// Where each name ends in ``names``.
    private(set) var nameEnds: [Int] = []
    private(set) var names: [UInt8] = []

    /// Room for `capacity` names before the table grows.
    init(capacity: Int) {
        slots = Self.emptySlots(for: capacity)
        nameEnds.reserveCapacity(capacity)
    }

    var count: Int { nameEnds.count }

    /// Where the name at `place` is in ``names``.
    func range(of place: Int) -> Range<Int> { (place == 0 ? 0 : nameEnds[place - 1])..<nameEnds[place] }

    /// The place of `name`, and whether it was added: a name met first takes the next place, in the probe that
    /// misses it.
    mutating func place(of name: UnsafeBufferPointer<UInt8>) -> (place: Int, added: Bool) {
        place(of: name, hash: Self.hash(name))
    }

    /// The places of `names`, each added if new, as ``place(of:)`` for one after another gives them; read in passes
    /// where no read waits on another. One by one, in a table of every stream of an import, each name waited on a
    /// miss of the processor's caches for its slot, then one for where its name is, then one for the name; in passes,
    /// the misses of many names overlap. Most names are in their first slot, or that slot is empty.
    mutating func places(of names: [UnsafeBufferPointer<UInt8>]) -> [(place: Int, added: Bool)] {
        let mask = slots.count - 1
        let hashes = names.map(Self.hash)
        let firstSlots = hashes.map { slots[$0 & mask] }
        let found = zip(names, firstSlots).map { name, slot in
            slot != 0 && self.name(at: slot - 1, equals: name) ? slot - 1 : nil
        }
        return names.indices.map { offset in
            found[offset].map { ($0, false) } ?? place(of: names[offset], hash: hashes[offset])
        }
    }

    private mutating func place(of name: UnsafeBufferPointer<UInt8>, hash: Int) -> (place: Int, added: Bool) {
        let mask = slots.count - 1
        var slot = hash & mask
        while slots[slot] != 0 {
            let place = slots[slot] - 1
            if self.name(at: place, equals: name) { return (place, false) }
            slot = (slot + 1) & mask
        }
        let place = nameEnds.count
        slots[slot] = place + 1
        names.append(contentsOf: name)
        nameEnds.append(names.count)
        if nameEnds.count * 2 > slots.count { grow() }
        return (place, true)
    }

    private func name(at place: Int, equals name: UnsafeBufferPointer<UInt8>) -> Bool {
        let range = range(of: place)
        guard range.count == name.count else { return false }
        guard !name.isEmpty else { return true }
        return names.withUnsafeBufferPointer {
            memcmp($0.baseAddress! + range.lowerBound, name.baseAddress!, name.count) == 0
        }
    }

    /// Twice the slots, every name placed again.
    private mutating func grow() {
        var slots = [Int](repeating: 0, count: self.slots.count * 2)
        let mask = slots.count - 1
        names.withUnsafeBufferPointer { names in
            for place in nameEnds.indices {
                var slot = Self.hash(UnsafeBufferPointer(rebasing: names[range(of: place)])) & mask
                while slots[slot] != 0 { slot = (slot + 1) & mask }
                slots[slot] = place + 1
            }
        }
        self.slots = slots
    }

    /// A power of two, at least twice `names`.
    private static func emptySlots(for names: Int) -> [Int] {
        [Int](repeating: 0, count: max(16, 1 << (Int.bitWidth - max(1, names * 2 - 1).leadingZeroBitCount)))
    }

    /// Seeded per process, like a dictionary's: an export's names cannot be chosen to collide.
    private static func hash(_ name: UnsafeBufferPointer<UInt8>) -> Int {
        var hasher = Hasher()
        hasher.combine(bytes: UnsafeRawBufferPointer(name))
        return hasher.finalize()
    }
}
