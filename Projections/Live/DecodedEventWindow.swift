import ChorusDomain
import ChorusLog
import Synchronization

/// The log's newest events, decoded once for every live stream. Every stream walks the same positions as the read
/// models apply them, and decoding an event (opening its sealed fields) cost each stream more than all else it did:
/// with a few hundred streams open it was a large share of the server's work (`chorus bench day`).
///
/// Keeps the events of the last ``capacity`` positions read, in order. A batch that holds an account's deletion or
/// the end of its erasure is never kept, and empties the window: what it kept was decoded under keys that may since be
/// destroyed, and none of it may outlive them. So that no deletion is missed while no stream has read it yet, the
/// window reads every position up to the one a stream asks through before it lends anything it kept.
public final class DecodedEventWindow: Sendable {
    /// An event as the log holds it, and decoded. An object: the window, the hub and each stream hold the same one,
    /// and the window drops its oldest by moving references (an event's fields, copied, cost a retain each).
    public final class Entry: Sendable {
        public let recorded: RecordedEvent
        public let event: DomainEvent

        init(recorded: RecordedEvent, event: DomainEvent) {
            (self.recorded, self.event) = (recorded, event)
        }
    }

    private let log: any EventLog
    private let keys: any PersonalDataKeys
    /// How many positions the window keeps: the newest, which open streams are about to send.
    public let capacity: Int
    private let window = Mutex<[Entry]>([])

    public init(log: any EventLog, keys: any PersonalDataKeys, capacity: Int = 4_096) {
        self.log = log
        self.keys = keys
        self.capacity = max(1, capacity)
    }

    /// Lends `body` up to `limit` decoded events from `start` on, no further than `end`, in place under the window's
    /// lock: a stream looks at each event this way (whether any is for it) without a copy of each. `body` holds up
    /// every other stream, so it must be quick. `end` is a position the log is known to hold (the read models have
    /// applied it): the window reads what it lacks up to there before it lends anything it kept, so that a deletion no
    /// stream has read yet still empties it first. The events come from the window when it holds `start`, else from
    /// the log, decoded, and are kept when they are newer than what the window holds. `body` gets fewer than `limit`
    /// events only when the log has fewer up to `end`.
    public func withEvents<R>(
        from start: LogPosition, through end: LogPosition, limit: Int, _ body: (ArraySlice<Entry>) throws -> R
    ) throws -> R {
        try window.withLock { window in
            let limit = end >= start ? min(limit, Int(clamping: end.rawValue - start.rawValue + 1)) : 0
            if let first = window.first?.recorded.position, let last = window.last?.recorded.position,
                start >= first, start <= last
            {
                // The positions after the window's newest, up to `end`, are read (and decoded) first: a stream is
                // about to walk them, and one of them may end an account whose events the window holds.
                let newer =
                    end > last && end.rawValue - last.rawValue <= UInt64(capacity)
                    ? try decode(from: last.next, limit: Int(end.rawValue - last.rawValue)) : []
                if end > last, newer.isEmpty || newer.contains(where: { Self.endsPersonalData($0.event) }) {
                    // Too far behind to tell, or personal data ended: nothing kept may be lent.
                    window.removeAll()
                } else {
                    window += newer
                    defer { if window.count > capacity { window.removeFirst(window.count - capacity) } }
                    let offset = Int(start.rawValue - first.rawValue)
                    return try body(window[offset..<min(window.count, offset + limit)])
                }
            }
            // Read and decoded under the lock: the streams asking for the same positions wait for one decoding.
            let read = try decode(from: start, limit: limit)
            if read.contains(where: { Self.endsPersonalData($0.event) }) {
                window.removeAll()
            } else if let last = window.last?.recorded.position, start < last {
                // A stream resuming from further back: the window keeps the newest.
            } else {
                if let last = window.last?.recorded.position, start != last.next { window.removeAll() }
                window += read
                if window.count > capacity { window.removeFirst(window.count - capacity) }
            }
            return try body(read[...])
        }
    }

    private func decode(from start: LogPosition, limit: Int) throws -> [Entry] {
        guard limit > 0 else { return [] }
        return try log.read(from: start, limit: limit).map { recorded in
            Entry(recorded: recorded, event: try DomainEvent(decoding: recorded, keys: keys))
        }
    }

    private static func endsPersonalData(_ event: DomainEvent) -> Bool {
        switch event {
        case .accountDeleted, .erasureCompleted: true
        default: false
        }
    }
}
