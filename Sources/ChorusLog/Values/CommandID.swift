import Foundation
import Synchronization

/// The millisecond and sequence number of the last time-ordered id this process made, and random bits drawn ahead.
private let version7State = Mutex(Version7State())

private struct Version7State {
    var milliseconds: UInt64 = 0
    var sequence: UInt64 = 0
    /// Drawn from the system 64 ids' worth at a time: each draw is a system call, about a microsecond, and every
    /// append makes an id or two.
    var random: [UInt64] = []

    mutating func nextRandom() -> UInt64 {
        if random.isEmpty {
            random = [UInt64](repeating: 0, count: 64)
            random.withUnsafeMutableBytes { arc4random_buf($0.baseAddress!, $0.count) }
        }
        return random.removeLast()
    }
}

/// Identifies the command that caused an append. Appending again with the same id appends nothing and returns the
/// original positions, so a client may retry a command whose answer it never received.
public struct CommandID: Hashable, Sendable, CustomStringConvertible {
    public let uuid: UUID

    /// A new, time-ordered id (UUID version 7): ids made later sort later, so the log's command index grows at its
    /// end instead of touching a random page per append.
    public init() { self.uuid = TimeOrderedUUID.make() }

    public init(_ uuid: UUID) { self.uuid = uuid }

    public var description: String { uuid.uuidString.lowercased() }
}

/// Ties together the events caused, directly or indirectly, by one request.
public struct CorrelationID: Hashable, Sendable, CustomStringConvertible {
    public let uuid: UUID

    public init() { self.uuid = TimeOrderedUUID.make() }

    public init(_ uuid: UUID) { self.uuid = uuid }

    public var description: String { uuid.uuidString.lowercased() }
}

/// Time-ordered UUIDs (RFC 9562 version 7): ids made later sort later, so indexes keyed by them grow at their end.
public enum TimeOrderedUUID {
    /// 48 bits of Unix milliseconds, a 12-bit sequence number, then 62 random bits (from the system's
    /// cryptographic generator). Each id sorts after every id made before it in this process: within one millisecond
    /// the sequence counts up, and past 4,096 ids, or when the clock steps back, the millisecond field runs ahead of
    /// the clock.
    public static func make() -> UUID {
        let now = UInt64(max(0, Date().timeIntervalSince1970 * 1000))
        let (milliseconds, sequence, random) = version7State.withLock { last in
            if now > last.milliseconds {
                (last.milliseconds, last.sequence) = (now, 0)
            } else if last.sequence < 0xFFF {
                last.sequence += 1
            } else {
                (last.milliseconds, last.sequence) = (last.milliseconds + 1, 0)
            }
            return (last.milliseconds, last.sequence, last.nextRandom())
        }
        let high = (milliseconds << 16) | 0x7000 | sequence
        let low = (random & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000
        let b = (high.bigEndian, low.bigEndian)
        return withUnsafeBytes(of: b) { UUID(uuid: $0.load(as: uuid_t.self)) }
    }
}
