import ChorusLog

/// What an answer was read from: the read models, the position, and the partitions of their tables it read. The read
/// models keep, for each partition, the last position a batch changed it at, so an answer can be served again, with a
/// newer position, for as long as none of what it read has changed: it is then exactly what a new read would answer.
public struct ReadFootprint: Sendable {
    /// The ``ProjectionEngine`` read from.
    let engine: UInt64
    /// The position the answer reflects.
    public let position: LogPosition
    /// The buckets of the partitions read (``ChorusStorage/ChangedKeys``).
    let buckets: [UInt32]
    /// When the answer stops holding with nothing changed: the first expiry of a muted word it applied.
    let expiresAt: EventTime?

    /// The same footprint, its answer known to hold at `position` (one ``ProjectionEngine/unchangedPosition(of:)``
    /// gave): later checks then need to look only at changes made after it, and there are none until the next write.
    public func holding(at position: LogPosition) -> ReadFootprint {
        precondition(position >= self.position, "a footprint only moves forward")
        return ReadFootprint(engine: engine, position: position, buckets: buckets, expiresAt: expiresAt)
    }

    /// The bytes it holds, about.
    public var size: Int { MemoryLayout<Self>.size + buckets.count * MemoryLayout<UInt32>.size }
}
