import ChorusDomain
import ChorusLog

/// Events handed to a ``RecordedEventImporter`` a few thousand at a time, each command whole: a command's events
/// never go into two batches. A batch is decoded by a task of its own, which then waits for the batch before it to be
/// appended and appends its own, while the next batch is read: reading, decoding and appending run at once, on both
/// cores. Batches are appended one at a time, in order, and a refused batch stops the import before the next one is
/// appended.
struct ImportBatches {
    /// Events per batch unless told otherwise: larger batches import faster, for more memory (three batches are held
    /// at once: one read, one decoded, one appended).
    static let defaultSize = 16_384

    private let importer: RecordedEventImporter
    /// Loads the keys into memory (``loadKeys(_:)``): each batch waits for it before it is decoded.
    private var keysLoading: Task<Void, any Error>?
    private let size: Int
    private var pending: [RecordedEvent] = []
    /// The records of `pending`, encoded as each event is added, on the thread that reads it (see ``EncodedRecords``).
    private var pendingRecords = EncodedRecords()
    /// The batches handed on and not yet settled, oldest first, with their sizes: at most two, one being appended and
    /// the next being decoded.
    private var handedOn: [(task: Task<Void, any Error>, count: Int)] = []
    /// Events appended so far.
    private(set) var appended = 0

    init(log: any EventLog, keys: any PersonalDataKeys, size: Int = Self.defaultSize) {
        importer = RecordedEventImporter(log: log, keys: keys)
        self.size = size
        pendingRecords.reserve(events: size, bytes: size * Self.recordBytes)
    }

    /// Room for a batch's records, with some to spare: the 1M-event demo log's take about 250 bytes each.
    private static let recordBytes = 320

    /// Runs `load` (reading every key into memory) on a task of its own while events are added; batches are decoded
    /// once it is done. ``finish()`` waits for it too, so that the keys are not closed under it.
    mutating func loadKeys(_ load: @escaping @Sendable () throws -> Void) {
        keysLoading = Task { try load() }
    }

    mutating func add(_ event: consuming RecordedEvent) async throws {
        pendingRecords.append(event)
        pending.append(event)
        if pending.count >= size { try await flush(holdingLastCommand: true) }
    }

    /// Appends what is pending, waits until every batch is appended, and has the importer write what it held.
    mutating func finish() async throws {
        try await keysLoading?.value
        try await flush(holdingLastCommand: false)
        try await settle()
        try await importer.finish()
    }

    private mutating func flush(holdingLastCommand: Bool) async throws {
        // The last command may go on in the next events: it waits for them.
        var held: [RecordedEvent] = []
        var heldRecords = EncodedRecords()
        if holdingLastCommand, let command = pending.last?.commandID {
            let start = pending.lastIndex { $0.commandID != command }.map { $0 + 1 } ?? 0
            held = Array(pending[start...])
            pending.removeSubrange(start...)
            heldRecords = pendingRecords.removeSuffix(from: start)
        }
        // The next batch's records go on after those held.
        heldRecords.reserve(events: size, bytes: size * Self.recordBytes)
        guard !pending.isEmpty else {
            (pending, pendingRecords) = (held, heldRecords)
            return
        }
        if handedOn.count == 2 { try await settleOldest() }
        let (importer, batch, records) = (self.importer, pending, pendingRecords)
        let (before, keysLoading) = (handedOn.last?.task, self.keysLoading)
        let task = Task {
            try await keysLoading?.value
            let decoded = importer.decode(batch, records: records)
            // In order, and not at all once a batch before it failed (its error comes again here).
            try await before?.value
            try await importer.append(decoded)
        }
        handedOn.append((task, batch.count))
        (pending, pendingRecords) = (held, heldRecords)
    }

    /// Waits for the batches handed on, and throws the first one's error: after a failure elsewhere, the log then
    /// ends where they left it.
    mutating func settle() async throws {
        while !handedOn.isEmpty { try await settleOldest() }
    }

    private mutating func settleOldest() async throws {
        let (task, count) = handedOn.removeFirst()
        try await task.value
        appended += count
    }
}
