import ChorusLog
import Foundation

/// Times as the HTTP API takes them (written as ``ChorusLog/EventTime/rfc3339``).
package enum Timestamps {
    private static let format = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    /// `2026-11-22T12:00:00Z` or with milliseconds; nil when neither.
    package static func parse(_ text: String) -> EventTime? {
        guard let date = (try? Date(text, strategy: format)) ?? (try? Date(text, strategy: .iso8601)) else {
            return nil
        }
        // To the nearest millisecond: .757 parses as .75699…
        return EventTime(millisecondsSince1970: Int64((date.timeIntervalSince1970 * 1000).rounded()))
    }
}
