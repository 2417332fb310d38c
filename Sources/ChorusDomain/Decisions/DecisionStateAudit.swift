import ChorusLog

/// Recomputes the decision state from the log and compares it, key by key, with the state stored beside the log:
/// part of `chorus log verify`. Every event is decoded on the way, so an event that no longer decodes is found too.
///
/// `idempotency` is not compared: it records requests, which the events do not carry.
public struct DecisionStateAudit {
    public struct Report: Sendable {
        /// The position the state was compared at.
        public var head: LogPosition = .start
        /// Entries compared and found equal.
        public var entries = 0
        /// The first difference, in table then key order; nil when the state matches the log.
        public var mismatch: Mismatch?
    }

    public struct Mismatch: Sendable, CustomStringConvertible {
        public let table: String
        /// The key as text, its parts joined by " / ".
        public let key: String
        /// The event that last wrote the key, when the log says it should be there.
        public let position: LogPosition?
        public let problem: String

        public var description: String {
            "decision state table \(table), key \(key): \(problem)"
                + (position.map { " (last written by the event at position \($0))" } ?? "")
        }
    }

    /// A log whose head keeps moving past each fold is given up on after this many tries.
    static let attempts = 20

    private let log: any EventLog
    private let state = DecisionState()
    /// Table name → key → the value the events leave there, and the position of the event that left it.
    private var expected: [String: [[UInt8]: (value: [UInt8], position: LogPosition)]] = [:]
    private var folded = LogPosition.start

    public init(log: any EventLog) {
        self.log = log
    }

    /// Folds the whole log, then compares; a server may keep appending meanwhile. `progress` gets the position folded
    /// and the head.
    public mutating func run(progress: (LogPosition, LogPosition) -> Void = { _, _ in }) throws -> Report {
        for _ in 0..<Self.attempts {
            try fold(through: log.head, progress: progress)
            let report = try log.readState { state in
                try state.position == folded ? try compare(in: state) : nil
            }
            if let report { return report }
        }
        throw LogKeptGrowing(attempts: Self.attempts)
    }

    private mutating func fold(through head: LogPosition, progress: (LogPosition, LogPosition) -> Void) throws {
        guard head > folded else { return }
        var seen = 0
        try log.scan(from: folded.next, through: head) { event in
            for change in state.changes(for: try DomainEvent(decoding: event), at: event.position) {
                if let value = change.value {
                    expected[change.table.name, default: [:]][change.key] = (value, event.position)
                } else {
                    expected[change.table.name]?[change.key] = nil
                }
            }
            folded = event.position
            seen += 1
            if seen % 65_536 == 0 { progress(folded, head) }
        }
        progress(folded, head)
    }

    private func compare(in stored: some StateReader) throws -> Report {
        var report = Report(head: folded)
        for table in state.derivedTables {
            let wanted = expected[table.name] ?? [:]
            let keys = wanted.keys.sorted { $0.lexicographicallyPrecedes($1) }
            var next = 0
            func mismatch(_ key: [UInt8], _ problem: String) -> Mismatch {
                Mismatch(
                    table: table.name,
                    key: String(decoding: key, as: UTF8.self).replacingOccurrences(of: "\u{0}", with: " / "),
                    position: wanted[key]?.position, problem: problem)
            }
            // Both sides in key order (LMDB's and the sort's are the same byte order): the first key either lacks is
            // the first difference.
            try stored.forEach(in: table) { storedKey, storedValue in
                let key = Array(storedKey)
                if next < keys.count, keys[next].lexicographicallyPrecedes(key) {
                    report.mismatch = mismatch(keys[next], "missing: the events put it there")
                    return false
                }
                guard next < keys.count, keys[next] == key, let value = wanted[key] else {
                    report.mismatch = mismatch(key, "stored, but no event puts it there")
                    return false
                }
                guard
                    storedValue.elementsEqual(value.value) || isLegacyEdge(storedValue, in: table)
                        || isLegacyPost(storedValue, expected: value.value, in: table)
                else {
                    report.mismatch = mismatch(
                        key, "stored \(storedValue.count) bytes differ from the \(value.value.count) the events leave")
                    return false
                }
                next += 1
                report.entries += 1
                return true
            }
            if report.mismatch != nil { return report }
            if next < keys.count {
                report.mismatch = mismatch(keys[next], "missing: the events put it there")
                return report
            }
        }
        return report
    }

    /// A post recorded by a Chorus from before posts could be edited: its author alone, without what follows it.
    private func isLegacyPost(_ value: UnsafeRawBufferPointer, expected: [UInt8], in table: StateTable) -> Bool {
        table == state.posts && expected.count == value.count + 2 && expected.starts(with: value)
    }

    /// A follow or like recorded by a Chorus from before they kept their position: an empty value.
    private func isLegacyEdge(_ value: UnsafeRawBufferPointer, in table: StateTable) -> Bool {
        value.isEmpty && (table == state.follows || table == state.likes)
    }
}

/// The log grew past every fold of an audit: a busy server. Verify a stopped one, or a backup.
public struct LogKeptGrowing: Error, CustomStringConvertible {
    public let attempts: Int
    public var description: String {
        "the log kept growing through \(attempts) tries to compare the decision state; verify a stopped server or a backup"
    }
}
