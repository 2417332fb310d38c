import Foundation
import Synchronization

/// The millisecond and sequence number of the last time-ordered id this process made.
private let lastVersion7 = Mutex<(milliseconds: UInt64, sequence: UInt64)>((0, 0))

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
    /// 48 bits of Unix milliseconds, a 12-bit sequence number, then 62 random bits (one draw from the system
    /// generator, which is a system call here). Each id sorts after every id made before it in this process: within
    /// one millisecond the sequence counts up, and past 4,096 ids, or when the clock steps back, the millisecond
    /// field runs ahead of the clock.
    public static func make() -> UUID {
        var generator = SystemRandomNumberGenerator()
        let now = UInt64(max(0, Date().timeIntervalSince1970 * 1000))
        let random: UInt64 = generator.next()
        let (milliseconds, sequence) = lastVersion7.withLock { last in
            if now > last.milliseconds {
                last = (now, 0)
            } else if last.sequence < 0xFFF {
                last.sequence += 1
            } else {
                last = (last.milliseconds + 1, 0)
            }
            return last
        }
        let high = (milliseconds << 16) | 0x7000 | sequence
        let low = (random & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000
        let b = (high.bigEndian, low.bigEndian)
        return withUnsafeBytes(of: b) { UUID(uuid: $0.load(as: uuid_t.self)) }
    }
}
