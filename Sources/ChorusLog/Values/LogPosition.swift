/// A global position in the log. The first event is at 1; positions are gapless and commit order is position order.
public struct LogPosition: RawRepresentable, Hashable, Comparable, Sendable, Codable, CustomStringConvertible,
    ExpressibleByIntegerLiteral
{
    public var rawValue: UInt64

    public init(rawValue: UInt64) { self.rawValue = rawValue }
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }
    public init(integerLiteral value: UInt64) { self.rawValue = value }

    /// Before the first event: the head of an empty log, and the place to subscribe from to get everything.
    public static let start = LogPosition(0)

    public var next: LogPosition { LogPosition(rawValue + 1) }

    public static func < (lhs: LogPosition, rhs: LogPosition) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String { String(rawValue) }
}
