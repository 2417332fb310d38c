import ChorusDomain
import ChorusLog
import Synchronization

/// The log's newest events, decoded once for every live stream. Every stream walks the same positions as the read
/// models apply them, and decoding an event (opening its sealed fields) cost each stream more than all else it did:
/// with 200 streams open it was a fifth of the server's work (BENCHMARKS.md, `chorus bench day`).
///
/// Keeps the events of the last ``capacity`` positions read, in order. A batch that holds an account's deletion or
/// the end of its erasure is never kept, and empties the window: what it kept was decoded under keys that may since be
/// destroyed, and none of it may outlive them.
public final class DecodedEventWindow: Sendable {
    /// An event as the log holds it, and decoded.
    public struct Entry: Sendable {
        public let recorded: RecordedEvent
        public let event: DomainEvent
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

    /// Up to `limit` events from `start` on, decoded: from the window when it holds `start`, else read from the log
    /// and decoded, and kept when they are newer than what the window holds. May return fewer than `limit` events
    /// when the log has more; none when it has none from `start` on.
    public func events(from start: LogPosition, limit: Int) throws -> [Entry] {
        try withEvents(from: start, limit: limit) { Array($0) }
    }

    /// ``events(from:limit:)`` lent to `body` in place, under the window's lock: a stream looks at each event this way
    /// (whether any is for it) without a copy of each. `body` holds up every other stream, so it must be quick.
    public func withEvents<R>(from start: LogPosition, limit: Int, _ body: (ArraySlice<Entry>) throws -> R) throws
        -> R
    {
        try window.withLock { window in
            if let first = window.first?.recorded.position, let last = window.last?.recorded.position,
                start >= first, start <= last
            {
                let offset = Int(start.rawValue - first.rawValue)
                return try body(window[offset..<min(window.count, offset + limit)])
            }
            // Read and decoded under the lock: the streams asking for the same positions wait for one decoding.
            let read = try log.read(from: start, limit: limit).map { recorded in
                Entry(recorded: recorded, event: try DomainEvent(decoding: recorded, keys: keys))
            }
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

    private static func endsPersonalData(_ event: DomainEvent) -> Bool {
        switch event {
        case .accountDeleted, .erasureCompleted: true
        default: false
        }
    }
}
