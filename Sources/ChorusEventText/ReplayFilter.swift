import ChorusLog

/// Which events `chorus replay` prints, and the console's Log page shows.
package struct ReplayFilter {
    package let types: Set<String>
    package let streams: Set<String>
    package let user: String?
    package let since: EventTime?
    package let until: EventTime?
    /// The user's id as the payload holds it, for ``admitsEnvelope(of:)``.
    private let userBytes: [UInt8]

    package init(
        types: Set<String> = [], streams: Set<String> = [], user: String? = nil, since: EventTime? = nil,
        until: EventTime? = nil
    ) {
        self.types = types
        self.streams = streams
        self.user = user
        self.since = since
        self.until = until
        userBytes = Array((user ?? "").utf8)
    }

    package var isEmpty: Bool { types.isEmpty && streams.isEmpty && user == nil && since == nil && until == nil }

    /// Whether `event` may be printed, as far as its envelope tells, and for a user its payload's bytes: checked before
    /// it is decoded. Users' ids are never sealed, so an event by someone else whose payload lacks the id names the
    /// user in no field, and need not be decoded (opening its sealed fields is most of a decoding's cost).
    package func admitsEnvelope(of event: RecordedEvent) -> Bool {
        if !types.isEmpty, !types.contains(event.type) { return false }
        if !streams.isEmpty, !streams.contains(event.stream.rawValue) { return false }
        if let since, event.recordedAt < since { return false }
        if let until, event.recordedAt >= until { return false }
        if let user, event.actor != user, !Self.bytes(event.payload, contain: userBytes) { return false }
        return true
    }

    private static func bytes(_ bytes: [UInt8], contain needle: [UInt8]) -> Bool {
        guard let first = needle.first, needle.count <= bytes.count else { return needle.isEmpty }
        var start = 0
        while let index = bytes[start...(bytes.count - needle.count)].firstIndex(of: first) {
            if bytes[index..<(index + needle.count)].elementsEqual(needle) { return true }
            start = index + 1
            if start > bytes.count - needle.count { return false }
        }
        return false
    }

    /// Whether `event`, whose envelope is admitted, is printed, decoded as `replayed`.
    package func admits(_ event: RecordedEvent, _ replayed: ReplayedEvent) -> Bool {
        guard let user else { return true }
        return event.actor == user || replayed.users.contains(user)
    }
}
