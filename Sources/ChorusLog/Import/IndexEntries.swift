import ChorusText
import Foundation

/// A batch's index entries grouped by stream, each stream's in version order, and its commands by id;
/// the streams in the order the index tables keep their keys (by name: a name sorts as its stream-index prefix, the
/// name and a NUL, does). ``LogIndex/write(_:through:in:)`` puts them in this order; an import works them out for its
/// batch before the writer's thread gets it (``PreparedRecordedEvents``), since sorting and grouping were most of its
/// index write. A batch whose entries an import holds to its end leaves its streams in the order they came
/// (``streamsInKeyOrder``): the end sorts the names of all of them once.
package struct IndexEntries: Sendable {
    /// A stream, by where its name and entries are: no reference to retain when the streams are sorted, read or
    /// freed.
    package struct Stream: Sendable {
        /// Where its name's UTF-8 bytes (the start of its stream-index keys) are in ``names``.
        let name: Range<Int>
        /// Where its entries are in ``entries``: in version order, gapless.
        package let entries: Range<Int>
    }

    /// One event's stream-index entry; its stream is the ``Stream`` whose range holds it.
    package struct Entry: Sendable {
        package let version: UInt64
        package let position: LogPosition
    }

    package struct Command: Sendable {
        let id: CommandID
        /// The id as two big-endian halves: the commands table's key order.
        let high: UInt64
        let low: UInt64
        package let outcome: AppendOutcome
    }

    package let streams: [Stream]
    /// Every stream's entries, stream after stream, each stream saying where its are. Held in one array, and the names
    /// in another, rather than two small arrays for each stream: most streams of an import's batch have a single event.
    package let entries: [Entry]
    let names: [UInt8]
    package let commands: [Command]
    /// Whether ``streams`` are by name; else in the order they came (``inKeyOrder()`` sorts them).
    package let streamsInKeyOrder: Bool

    /// Index entries grouped by stream as they come, in position order (a stream's entries then come in version
    /// order): one hash of each entry's stream. ``sorted(commands:)`` then sorts only the streams, and places each
    /// entry after its stream's entries before it; what it makes holds the streams' names as bytes, no stream itself.
    package struct Grouping {
        /// The groups' names: a group is its name's place.
        private var table: StreamNameTable
        private var counts: [Int] = []
        /// Each entry's group, and the entry, in the order they came.
        private var groupOfEntry: [Int] = []
        private var added: [Entry] = []

        /// `entries` is how many will be added, or a guess at it; `streams` at most how many streams they have.
        package init(entries: Int, streams: Int) {
            table = StreamNameTable(capacity: streams)
            counts.reserveCapacity(streams)
            groupOfEntry.reserveCapacity(entries)
            added.reserveCapacity(entries)
        }

        /// Adds the entry of `stream`'s event at `version` and `position`, and returns its stream's group: the same
        /// for every entry of one stream.
        @discardableResult
        package mutating func add(_ stream: StreamID, version: UInt64, position: LogPosition) -> Int {
            let (group, added) = stream.rawValue.withBorrowedUTF8 { table.place(of: $0) }
            if added { counts.append(0) }
            counts[group] += 1
            groupOfEntry.append(group)
            self.added.append(Entry(version: version, position: position))
            return group
        }

        /// The entries in key order, and `commands`, which come in the order they came, sorted by id.
        package consuming func sorted(commands: [(id: CommandID, outcome: AppendOutcome)]) -> IndexEntries {
            let table = self.table
            let order = IndexEntries.sortedByName(Array(counts.indices), in: table.names) { table.range(of: $0) }
            return placed(in: order, commands: commands, streamsInKeyOrder: true)
        }

        /// The entries grouped by stream, the streams in the order they came (not in key order), and `commands`
        /// sorted by id: for an import that holds its batches' entries and puts their streams in order once, at its
        /// end (``HeldImportIndex``).
        consuming func grouped(commands: [(id: CommandID, outcome: AppendOutcome)]) -> IndexEntries {
            placed(in: Array(counts.indices), commands: commands, streamsInKeyOrder: false)
        }

        /// The streams in `order` (of their groups), each stream's entries after those of the streams before it.
        private consuming func placed(
            in order: [Int], commands: [(id: CommandID, outcome: AppendOutcome)], streamsInKeyOrder: Bool
        ) -> IndexEntries {
            let table = self.table
            let (streams, starts, entryCount) = IndexEntries.laidOut(order, counts: counts, names: table)
            var nextSlot = starts
            var placed = [Entry](repeating: Entry(version: 0, position: LogPosition(0)), count: entryCount)
            for (entry, group) in zip(added, groupOfEntry) {
                placed[nextSlot[group]] = entry
                nextSlot[group] += 1
            }
            // UUIDv7 ids come nearly sorted (the tail keeps commands in the order they came): the sort finds the runs.
            let commands = commands.map { command in
                withUnsafeBytes(of: command.id.uuid.uuid) { bytes in
                    Command(
                        id: command.id, high: UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self)),
                        low: UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self)),
                        outcome: command.outcome)
                }
            }.sorted { ($0.high, $0.low) < ($1.high, $1.low) }
            return IndexEntries(
                streams: streams, entries: placed, names: table.names, commands: commands,
                streamsInKeyOrder: streamsInKeyOrder)
        }
    }

    /// The streams named at `order`'s places in `names`, in that order, each with room for as many entries as
    /// `counts` says at its place, after those of the streams before it; where each stream's entries start, by place;
    /// and how many entries there are in all. How a batch's grouping and an import's held runs lay theirs out.
    static func laidOut(_ order: [Int], counts: [Int], names: StreamNameTable) -> (
        streams: [Stream], starts: [Int], entryCount: Int
    ) {
        var streams: [Stream] = []
        streams.reserveCapacity(order.count)
        var starts = [Int](repeating: 0, count: counts.count)
        var start = 0
        for place in order {
            starts[place] = start
            streams.append(Stream(name: names.range(of: place), entries: start..<start + counts[place]))
            start += counts[place]
        }
        return (streams, starts, start)
    }

    /// These entries with their streams in key order; each stream's entries stay where they are.
    package func inKeyOrder() -> IndexEntries {
        guard !streamsInKeyOrder else { return self }
        return IndexEntries(
            streams: Self.sortedByName(streams, in: names, name: \.name), entries: entries, names: names,
            commands: commands)
    }

    /// `items` sorted by their names, the bytes of `names` at the range `name` gives. With memcmp: comparing the names'
    /// UTF-8 views was half of writing an import's index, and the generic `lexicographicallyPrecedes` half of what was
    /// left of the sort. They are sorted by their names' first bytes, held beside them, which tell nearly every two
    /// apart; then by the names, back to back.
    static func sortedByName<Item>(_ items: [Item], in names: [UInt8], name: (Item) -> Range<Int>) -> [Item] {
        names.withUnsafeBytes { bytes in
            var order = items.map {
                (prefix: KeyOrder.Prefix(UnsafeRawBufferPointer(rebasing: bytes[name($0)])), item: $0)
            }
            order.sort { a, b in
                KeyOrder.precedes(a.prefix, b.prefix) {
                    (
                        UnsafeRawBufferPointer(rebasing: bytes[name(a.item)]),
                        UnsafeRawBufferPointer(rebasing: bytes[name(b.item)])
                    )
                }
            }
            return order.map(\.item)
        }
    }

    /// Entries grouped by stream, each stream's in version order, `commands` by id, and `streams` by name unless
    /// `streamsInKeyOrder` is false.
    init(streams: [Stream], entries: [Entry], names: [UInt8], commands: [Command], streamsInKeyOrder: Bool = true) {
        (self.streams, self.entries, self.names, self.commands) = (streams, entries, names, commands)
        self.streamsInKeyOrder = streamsInKeyOrder
    }

    /// Whether each stream's versions run on without a gap, and no command comes twice.
    var runsOn: Bool {
        for stream in streams {
            let versions = entries[stream.entries]
            guard zip(versions, versions.dropFirst()).allSatisfy({ $0.version + 1 == $1.version }) else { return false }
        }
        return zip(commands, commands.dropFirst()).allSatisfy { ($0.high, $0.low) != ($1.high, $1.low) }
    }

    /// The version of `stream`'s first entry.
    package func firstVersion(of stream: Stream) -> UInt64? {
        stream.entries.isEmpty ? nil : entries[stream.entries.lowerBound].version
    }

    /// Lends `body` the UTF-8 bytes of `stream`'s name.
    package func withName<R>(of stream: Stream, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try names.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[stream.name])) }
    }
}

extension IndexEntries.Command {
    /// The commands-table key.
    package func withKey<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeBytes(of: (high.bigEndian, low.bigEndian), body)
    }
}
