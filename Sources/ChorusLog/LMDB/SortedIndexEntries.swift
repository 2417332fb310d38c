import ChorusStorage

/// An ``UnindexedTail``'s index entries in the order the index tables keep their keys: streams by name (a name sorts
/// as its stream-index prefix, the name and a NUL, does), each with its entries in version order, and commands by id.
/// ``LogIndex/write(_:through:in:)`` puts them in this order; an import works them out for its batch before the
/// writer's thread gets it (``PreparedRecordedEvents``), since sorting and grouping were most of its index write.
struct SortedIndexEntries: Sendable {
    struct Stream: Sendable {
        let stream: StreamID
        /// The name's UTF-8 bytes: the stream-heads key.
        let name: [UInt8]
        /// In version order, gapless.
        var entries: [UnindexedTail.IndexEntry]
    }

    struct Command: Sendable {
        let id: CommandID
        /// The id as two big-endian halves: the commands table's key order.
        let high: UInt64
        let low: UInt64
        let outcome: AppendOutcome
    }

    let streams: [Stream]
    let commands: [Command]

    init(_ tail: UnindexedTail) {
        // A stream's entries are already in version order: group them, and sort only the streams. One hash of each
        // entry's stream: each stream's last version is its group's last entry.
        var groupOfStream: [StreamID: Int] = Dictionary(minimumCapacity: tail.streamCount)
        var streams: [Stream] = []
        for entry in tail.indexEntries {
            if let group = groupOfStream[entry.stream] {
                streams[group].entries.append(entry)
            } else {
                groupOfStream[entry.stream] = streams.count
                streams.append(Stream(stream: entry.stream, name: Array(entry.stream.rawValue.utf8), entries: [entry]))
            }
        }
        // With memcmp: comparing the names' UTF-8 views was half of writing an import's index, and the generic
        // `lexicographicallyPrecedes` half of what was left of the sort. Their places are sorted, comparing the names
        // copied back to back: moving streams, or even reading one to compare its name, retains its references, and
        // that cost more than comparing.
        var names: [UInt8] = []
        var nameEnds: [Int] = []
        nameEnds.reserveCapacity(streams.count)
        for stream in streams {
            names += stream.name
            nameEnds.append(names.count)
        }
        var order = Array(streams.indices)
        names.withUnsafeBytes { names in
            nameEnds.withUnsafeBufferPointer { ends in
                func name(_ index: Int) -> UnsafeRawBufferPointer {
                    UnsafeRawBufferPointer(rebasing: names[(index == 0 ? 0 : ends[index - 1])..<ends[index]])
                }
                order.sort { KeyOrder.compare(name($0), name($1)) < 0 }
            }
        }
        self.streams = order.map { streams[$0] }
        // UUIDv7 ids come nearly sorted (the tail keeps commands in the order they came), and the sort finds the runs.
        commands = tail.commands.map { command in
            withUnsafeBytes(of: command.id.uuid.uuid) { bytes in
                Command(
                    id: command.id, high: UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self)),
                    low: UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self)),
                    outcome: command.outcome)
            }
        }.sorted { ($0.high, $0.low) < ($1.high, $1.low) }
    }
}

extension SortedIndexEntries.Command {
    /// The commands-table key.
    func withKey<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeBytes(of: (high.bigEndian, low.bigEndian), body)
    }
}
