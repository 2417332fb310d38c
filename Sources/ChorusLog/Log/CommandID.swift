import Foundation
import Synchronization

private let version7Sequence = Atomic<UInt16>(0)

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
    /// 48 bits of Unix milliseconds, then 74 random bits (one draw from the system generator, which is a system call
    /// here, plus a per-process sequence that keeps ids of one millisecond distinct).
    public static func make(at date: Date = Date()) -> UUID {
        var generator = SystemRandomNumberGenerator()
        let milliseconds = UInt64(max(0, date.timeIntervalSince1970 * 1000))
        let random: UInt64 = generator.next()
        let sequence = UInt64(version7Sequence.wrappingAdd(1, ordering: .relaxed).newValue & 0xFFF)
        let high = (milliseconds << 16) | 0x7000 | sequence
        let low = (random & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000
        let b = (high.bigEndian, low.bigEndian)
        return withUnsafeBytes(of: b) { UUID(uuid: $0.load(as: uuid_t.self)) }
    }
}
