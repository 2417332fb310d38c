/// The time as RFC 3339 UTC with milliseconds, `2026-11-22T10:00:00.123Z`: how the HTTP API and `chorus replay` write
/// times. Written by hand: every post in a feed has one, and Foundation's formatter cost more than the rest of the
/// post (and a tenth of a replay).
extension EventTime {
    /// Appends the timestamp's 24 characters to `text`, made on the stack and appended at once.
    public func appendRFC3339(to text: inout [UInt8]) {
        let milliseconds = millisecondsSince1970
        let seconds = milliseconds.floorDivided(by: 1000)
        let days = seconds.floorDivided(by: 86_400)
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = Self.civilDate(daysSince1970: days)
        let (hour, minute, second) = (secondOfDay / 3600, secondOfDay % 3600 / 60, secondOfDay % 60)
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { characters in
            // Two digits at a time, each at its fixed place: a replay writes one time for every event.
            func pair(_ value: Int64, at offset: Int) {
                let tens = value / 10
                characters[offset] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: tens)
                characters[offset + 1] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value &- tens &* 10)
            }
            pair(year / 100 % 100, at: 0)
            pair(year % 100, at: 2)
            characters[4] = UInt8(ascii: "-")
            pair(month, at: 5)
            characters[7] = UInt8(ascii: "-")
            pair(day, at: 8)
            characters[10] = UInt8(ascii: "T")
            pair(hour, at: 11)
            characters[13] = UInt8(ascii: ":")
            pair(minute, at: 14)
            characters[16] = UInt8(ascii: ":")
            pair(second, at: 17)
            characters[19] = UInt8(ascii: ".")
            let fraction = milliseconds - seconds * 1000
            characters[20] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: fraction / 100)
            pair(fraction % 100, at: 21)
            characters[23] = UInt8(ascii: "Z")
            text.append(contentsOf: characters)
        }
    }

    /// ``appendRFC3339(to:)``'s characters as a string.
    public var rfc3339: String {
        var text: [UInt8] = []
        appendRFC3339(to: &text)
        return String(decoding: text, as: UTF8.self)
    }

    /// The proleptic Gregorian date of a day count (Howard Hinnant's `civil_from_days`).
    private static func civilDate(daysSince1970 days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468
        let era = shifted.floorDivided(by: 146_097)
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

extension Int64 {
    fileprivate func floorDivided(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}
