import Foundation

/// When an event was recorded: milliseconds since 1970 UTC. The log keeps these non-decreasing in position order.
public struct EventTime: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let millisecondsSince1970: Int64

    public init(millisecondsSince1970: Int64) { self.millisecondsSince1970 = millisecondsSince1970 }

    public init(_ date: Date) {
        self.millisecondsSince1970 = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }

    public static var now: EventTime { EventTime(Date()) }

    public var date: Date { Date(timeIntervalSince1970: Double(millisecondsSince1970) / 1000) }

    public static func < (lhs: EventTime, rhs: EventTime) -> Bool {
        lhs.millisecondsSince1970 < rhs.millisecondsSince1970
    }

    public var description: String { date.formatted(.iso8601) }
}
