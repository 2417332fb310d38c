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
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { characters in
            var offset = 0
            func put(_ character: UInt8) {
                characters[offset] = character
                offset += 1
            }
            /// `value`'s last `count` digits, leading zeros included.
            func digits(_ value: Int64, _ count: Int) {
                var rest = value
                for index in stride(from: offset + count - 1, through: offset, by: -1) {
                    characters[index] = UInt8(ascii: "0") + UInt8(rest % 10)
                    rest /= 10
                }
                offset += count
            }
            digits(year, 4)
            put(UInt8(ascii: "-"))
            digits(month, 2)
            put(UInt8(ascii: "-"))
            digits(day, 2)
            put(UInt8(ascii: "T"))
            digits(secondOfDay / 3600, 2)
            put(UInt8(ascii: ":"))
            digits(secondOfDay % 3600 / 60, 2)
            put(UInt8(ascii: ":"))
            digits(secondOfDay % 60, 2)
            put(UInt8(ascii: "."))
            digits(milliseconds - seconds * 1000, 3)
            put(UInt8(ascii: "Z"))
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
