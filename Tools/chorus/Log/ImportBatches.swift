import ChorusDomain
import ChorusLog

/// Events handed to a ``RecordedEventImporter`` a few thousand at a time, each command whole: a command's events
/// never go into two batches.
struct ImportBatches {
    static let size = 4_096

    private let importer: RecordedEventImporter
    private var pending: [RecordedEvent] = []
    /// Events appended so far.
    private(set) var appended = 0

    init(log: any EventLog, keys: any PersonalDataKeys) {
        importer = RecordedEventImporter(log: log, keys: keys)
    }

    mutating func add(_ event: RecordedEvent) async throws {
        pending.append(event)
        if pending.count >= Self.size { try await flush(holdingLastCommand: true) }
    }

    /// Appends what is pending.
    mutating func finish() async throws {
        try await flush(holdingLastCommand: false)
    }

    private mutating func flush(holdingLastCommand: Bool) async throws {
        // The last command may go on in the next events: it waits for them.
        var held: [RecordedEvent] = []
        if holdingLastCommand, let command = pending.last?.commandID {
            let start = pending.lastIndex { $0.commandID != command }.map { $0 + 1 } ?? 0
            held = Array(pending[start...])
            pending.removeSubrange(start...)
        }
        guard !pending.isEmpty else {
            pending = held
            return
        }
        try await importer.append(pending)
        appended += pending.count
        pending = held
    }
}
