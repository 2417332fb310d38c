/// Events' stored records (``EventRecordCodec``), back to back in one buffer, each encoded as its event is added: a
/// bulk import encodes each event where it reads it, on its own thread, and hands the records on with the events
/// (``PreparedRecordedEvents``).
///
/// Encoded there, the event is a value of its own. Encoded later from an array of events, each was copied first (its
/// strings and payload retained and released): the encoder writes the records through raw
/// pointers, which for all the compiler knows could change the array's elements.
public struct EncodedRecords: Sendable {
    /// The records, back to back from the start, then room for more; the i-th ends at `ends[i]`. Grown by
    /// doubling: appended to record by record, the zeros each record is written over took a third of the encoding.
    private var storage: [UInt8] = []
    private var ends: [Int] = []

    public init() {}

    /// The records of `events`, each read in place, by index.
    init(_ events: [RecordedEvent]) {
        reserve(events: events.count, bytes: events.indices.reduce(0) { $0 + EventRecordCodec.encodedSize(events[$1]) })
        for offset in events.indices { append(events[offset]) }
    }

    /// Makes room at once for `events` records of `bytes` bytes in all, those already here included.
    public mutating func reserve(events: Int, bytes: Int) {
        makeRoom(through: bytes)
        ends.reserveCapacity(events)
    }

    public var count: Int { ends.count }

    /// The bytes of every record, in order.
    private var bytes: ArraySlice<UInt8> { storage[..<(ends.last ?? 0)] }

    /// Encodes `event`'s record after the others.
    public mutating func append(_ event: borrowing RecordedEvent) {
        let start = ends.last ?? 0
        let end = start + EventRecordCodec.encodedSize(event)
        makeRoom(through: end)
        storage.withUnsafeMutableBytes { bytes in
            EventRecordCodec.encode(event, into: UnsafeMutableRawBufferPointer(rebasing: bytes[start..<end]))
        }
        ends.append(end)
    }

    /// Calls `body` with each record and its offset, in order.
    func forEachRecord(_ body: (Int, UnsafeRawBufferPointer) throws -> Void) rethrows {
        try storage.withUnsafeBytes { bytes in
            var start = 0
            for (offset, end) in ends.enumerated() {
                try body(offset, UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
                start = end
            }
        }
    }

    /// Whether the i-th record holds position `first` + i, for every i: records handed on with other events than
    /// their own (a batch split in the wrong place) would otherwise be written as those events'.
    func holdPositions(from first: LogPosition) -> Bool {
        var holds = true
        forEachRecord { offset, record in
            let stored =
                record.count < EventRecordCodec.headerSize
                ? nil : record.loadUnaligned(fromByteOffset: EventRecordCodec.positionOffset, as: UInt64.self)
            holds = holds && stored.map(UInt64.init(littleEndian:)) == first.rawValue + UInt64(offset)
        }
        return holds
    }

    /// The records from the `index`-th on, taken out of these.
    public mutating func removeSuffix(from index: Int) -> EncodedRecords {
        let start = index == 0 ? 0 : ends[index - 1]
        var suffix = EncodedRecords()
        suffix.storage = Array(bytes[start...])
        suffix.ends = ends[index...].map { $0 - start }
        ends.removeSubrange(index...)
        return suffix
    }

    /// The first `count` records.
    public func prefix(_ count: Int) -> EncodedRecords {
        var prefix = EncodedRecords()
        prefix.ends = Array(ends.prefix(count))
        prefix.storage = Array(storage.prefix(prefix.ends.last ?? 0))
        return prefix
    }

    private mutating func makeRoom(through end: Int) {
        guard end > storage.count else { return }
        storage += repeatElement(0, count: max(end, 2 * storage.count) - storage.count)
    }
}
