import ChorusDomain
import ChorusLog
import Dispatch
import Synchronization

/// An event decoded for the read models, with what they may use of its envelope. A class: handing it to each model
/// then retains one reference, where a copy of the event would retain each of its strings.
final class DecodedEvent: Sendable {
    let event: DomainEvent
    let envelope: EventEnvelope

    init(event: DomainEvent, envelope: EventEnvelope) {
        self.event = event
        self.envelope = envelope
    }
}

/// Reads and decodes the log ahead of a build, on a thread of its own, a few slices at a time: a build applies the
/// events in one transaction on one thread, so reading, checking and decoding them on the other core takes a fifth of
/// the work off it. At most `depth` slices wait, so memory stays flat whatever the length of the log.
final class DecodedLogReader: Sendable {
    private let log: any EventLog
    private let keys: any PersonalDataKeys
    private let sliceSize: Int
    /// Free places for slices; the reader waits on it when `depth` slices wait to be taken.
    private let free: DispatchSemaphore
    /// Slices ready to be taken.
    private let ready = DispatchSemaphore(value: 0)
    /// Signalled once the reading thread has finished.
    private let finished = DispatchSemaphore(value: 0)
    private let slices = Mutex<[Result<[DecodedEvent], any Error>]>([])
    /// Slices the build has applied, freed on the reading thread: freeing an event's strings is work too.
    private let applied = Mutex<[[DecodedEvent]]>([])
    private let stopping = Atomic<Bool>(false)

    /// Runs `body` with a reader of the first `limit` events of `log`, reading ahead on a thread of its own until
    /// `body` returns.
    static func readingAhead<R>(
        _ log: any EventLog, keys: any PersonalDataKeys, limit: Int, sliceSize: Int = 2_048, depth: Int = 4,
        _ body: (DecodedLogReader) throws -> R
    ) rethrows -> R {
        let reader = DecodedLogReader(log: log, keys: keys, sliceSize: sliceSize, depth: depth)
        DispatchQueue(label: "chorus.projections.read-ahead").async {
            reader.read(limit: limit)
            reader.finished.signal()
        }
        defer { reader.stop() }
        return try body(reader)
    }

    private init(log: any EventLog, keys: any PersonalDataKeys, sliceSize: Int, depth: Int) {
        self.log = log
        self.keys = keys
        self.sliceSize = sliceSize
        free = DispatchSemaphore(value: depth)
    }

    /// The next slice in log order; empty once `limit` events or the whole log have been handed out.
    func next() throws -> [DecodedEvent] {
        ready.wait()
        let slice = slices.withLock { $0.removeFirst() }
        free.signal()
        return try slice.get()
    }

    /// Hands back a slice the build has applied, to be freed on the reading thread.
    func recycle(_ slice: [DecodedEvent]) {
        applied.withLock { $0.append(slice) }
    }

    /// Stops the reading thread and waits for it, whether or not it read everything.
    private func stop() {
        guard !stopping.exchange(true, ordering: .relaxed) else { return }
        free.signal()
        finished.wait()
    }

    private func read(limit: Int) {
        var from = LogPosition.start
        var remaining = limit
        while !stopping.load(ordering: .relaxed) {
            free.wait()
            guard !stopping.load(ordering: .relaxed) else { return }
            applied.withLock { $0.removeAll() }
            let slice = Result { () throws -> [DecodedEvent] in
                guard remaining > 0 else { return [] }
                return try log.read(from: from.next, limit: min(sliceSize, remaining)).map { record in
                    DecodedEvent(
                        event: try DomainEvent(decoding: record, keys: keys),
                        envelope: EventEnvelope(position: record.position, recordedAt: record.recordedAt))
                }
            }
            slices.withLock { $0.append(slice) }
            ready.signal()
            // The end (an empty slice) or a failure is the last slice handed out.
            guard case .success(let events) = slice, let last = events.last else { return }
            from = last.envelope.position
            remaining -= events.count
        }
    }
}
