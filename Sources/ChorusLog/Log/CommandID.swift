import Foundation

/// Identifies the command that caused an append. Appending again with the same id appends nothing and returns the
/// original positions, so a client may retry a command whose answer it never received.
public struct CommandID: Hashable, Sendable, CustomStringConvertible {
    public let uuid: UUID

    /// A new, time-ordered id (UUID version 7): ids made later sort later, so the log's command index grows at its
    /// end instead of touching a random page per append.
    public init() { self.uuid = UUID.version7() }

    public init(_ uuid: UUID) { self.uuid = uuid }

    public var description: String { uuid.uuidString.lowercased() }
}

/// Ties together the events caused, directly or indirectly, by one request.
public struct CorrelationID: Hashable, Sendable, CustomStringConvertible {
    public let uuid: UUID

    public init() { self.uuid = UUID.version7() }

    public init(_ uuid: UUID) { self.uuid = uuid }

    public var description: String { uuid.uuidString.lowercased() }
}

extension UUID {
    /// RFC 9562 version 7: 48 bits of Unix milliseconds, then random bits.
    static func version7(at date: Date = Date()) -> UUID {
        var generator = SystemRandomNumberGenerator()
        let milliseconds = UInt64(max(0, date.timeIntervalSince1970 * 1000))
        let random = (generator.next() as UInt64, generator.next() as UInt64)
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in 0..<6 { bytes[index] = UInt8(truncatingIfNeeded: milliseconds >> (40 - 8 * UInt64(index))) }
        for index in 6..<16 {
            let word = index < 11 ? random.0 : random.1
            bytes[index] = UInt8(truncatingIfNeeded: word >> (8 * UInt64(index % 8)))
        }
        bytes[6] = (bytes[6] & 0x0F) | 0x70
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9],
                bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }
}
