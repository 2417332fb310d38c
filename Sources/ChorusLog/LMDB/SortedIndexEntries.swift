import ChorusStorage

/// An ``UnindexedTail``'s index entries in the order the index tables keep their keys: streams by name (a name sorts
/// as its stream-index prefix, the name and a NUL, does), each with its entries in version order, and commands by id.
/// ``LogIndex/write(_:through:in:)`` puts them in this order; an import works them out for its batch before the
/// writer's thread gets it (``PreparedRecordedEvents``), since sorting and grouping were most of its index write.
struct SortedIndexEntries: Sendable {
    struct Stream: Sendable {
        let stream: StreamID
        /// Where its name's UTF-8 bytes (the stream-heads key) are in ``names``.
        let name: Range<Int>
        /// Where its entries are in ``entries``: in version order, gapless.
        let entries: Range<Int>
    }

    /// One event's stream-index entry; its stream is the ``Stream`` whose range holds it.
    struct Entry: Sendable {
        let version: UInt64
        let position: LogPosition
    }

    struct Command: Sendable {
        let id: CommandID
        /// The id as two big-endian halves: the commands table's key order.
        let high: UInt64
        let low: UInt64
        let outcome: AppendOutcome
    }

    let streams: [Stream]
    /// Every stream's entries, stream after stream in the order of ``streams``. Held in one array, and the names in
    /// another, rather than two small arrays for each stream: most streams of an import's batch have a single event.
    let entries: [Entry]
    let names: [UInt8]
    let commands: [Command]

    init(_ tail: UnindexedTail) {
        self.init(entries: tail.indexEntries, streams: tail.streamCount, commands: tail.commands)
    }

    /// Sorts `entries`, which come in position order, and `commands`, in the order they came; `streams` is how many
    /// streams the entries have, or a guess at it.
    init(
        entries: [UnindexedTail.IndexEntry], streams streamCount: Int,
        commands: [(id: CommandID, outcome: AppendOutcome)]
    ) {
        // A stream's entries come in version order: group them (one hash of each entry's stream), sort only the
        // streams, then place each entry after its stream's entries before it.
        var groupOfStream: [StreamID: Int] = Dictionary(minimumCapacity: streamCount)
        var firstSeen: [(stream: StreamID, count: Int)] = []
        firstSeen.reserveCapacity(streamCount)
        var groupOfEntry: [Int] = []
        groupOfEntry.reserveCapacity(entries.count)
        var names: [UInt8] = []
        var nameEnds: [Int] = []
        nameEnds.reserveCapacity(streamCount)
        for entry in entries {
            if let group = groupOfStream[entry.stream] {
                firstSeen[group].count += 1
                groupOfEntry.append(group)
            } else {
                groupOfStream[entry.stream] = firstSeen.count
                groupOfEntry.append(firstSeen.count)
                firstSeen.append((entry.stream, 1))
                names += entry.stream.rawValue.utf8
                nameEnds.append(names.count)
            }
        }
        // With memcmp: comparing the names' UTF-8 views was half of writing an import's index, and the generic
        // `lexicographicallyPrecedes` half of what was left of the sort. The groups' places are sorted, comparing the
        // names back to back: moving streams, or even reading one to compare its name, retains its references.
        func name(_ group: Int) -> Range<Int> { (group == 0 ? 0 : nameEnds[group - 1])..<nameEnds[group] }
        var order = Array(firstSeen.indices)
        names.withUnsafeBytes { bytes in
            order.sort {
                KeyOrder.compare(
                    UnsafeRawBufferPointer(rebasing: bytes[name($0)]), UnsafeRawBufferPointer(rebasing: bytes[name($1)])
                ) < 0
            }
        }
        var streams: [Stream] = []
        streams.reserveCapacity(order.count)
        var nextSlot = [Int](repeating: 0, count: order.count)
        var start = 0
        for group in order {
            nextSlot[group] = start
            streams.append(
                Stream(
                    stream: firstSeen[group].stream, name: name(group), entries: start..<start + firstSeen[group].count)
            )
            start += firstSeen[group].count
        }
        var placed = [Entry](repeating: Entry(version: 0, position: LogPosition(0)), count: start)
        for (entry, group) in zip(entries, groupOfEntry) {
            placed[nextSlot[group]] = Entry(version: entry.version, position: entry.position)
            nextSlot[group] += 1
        }
        (self.streams, self.entries, self.names) = (streams, placed, names)
        // UUIDv7 ids come nearly sorted (the tail keeps commands in the order they came), and the sort finds the runs.
        self.commands = commands.map { command in
            withUnsafeBytes(of: command.id.uuid.uuid) { bytes in
                Command(
                    id: command.id, high: UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self)),
                    low: UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self)),
                    outcome: command.outcome)
            }
        }.sorted { ($0.high, $0.low) < ($1.high, $1.low) }
    }

    /// Whether each stream's versions run on without a gap, and no command comes twice.
    var runsOn: Bool {
        for stream in streams {
            let versions = entries[stream.entries]
            guard zip(versions, versions.dropFirst()).allSatisfy({ $0.version + 1 == $1.version }) else { return false }
        }
        return zip(commands, commands.dropFirst()).allSatisfy { ($0.high, $0.low) != ($1.high, $1.low) }
    }

    /// Lends `body` the UTF-8 bytes of `stream`'s name.
    func withName<R>(of stream: Stream, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try names.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[stream.name])) }
    }
}

extension SortedIndexEntries.Command {
    /// The commands-table key.
    func withKey<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeBytes(of: (high.bigEndian, low.bigEndian), body)
    }
}
