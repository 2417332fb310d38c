import ChorusLog
import ChorusText

/// Recomputes the decision state from the log and compares it, key by key, with the state stored beside the log:
/// part of `chorus log verify`. Every event is decoded on the way, so an event that no longer decodes is found too.
///
/// `idempotency` is not compared: it records requests, which the events do not carry. A state in an older Chorus's
/// format is not compared either: it is recomputed when the log is next opened for writing (``DecisionStateUpgrade``).
public struct DecisionStateAudit {
    public struct Report: Sendable {
        /// The position the state was compared at.
        public var head: LogPosition = .start
        /// Entries compared and found equal.
        public var entries = 0
        /// The first difference, in table then key order; nil when the state matches the log.
        public var mismatch: Mismatch?
        /// The format of the stored state when an older Chorus wrote it, which is then not compared; nil when it is
        /// this one's.
        public var olderFormat: UInt32?
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
    private var fold = DecisionStateFold()

    private let keys: any PersonalDataKeys

    public init(log: any EventLog, keys: any PersonalDataKeys) {
        self.log = log
        self.keys = keys
    }

    /// Folds the whole log, then compares; a server may keep appending meanwhile. `progress` gets the position folded
    /// and the head.
    public mutating func run(progress: (LogPosition, LogPosition) -> Void = { _, _ in }) throws -> Report {
        let state = self.state
        for _ in 0..<Self.attempts {
            try fold.fold(log, keys: keys, through: log.head, progress: progress)
            let fold = self.fold
            let report = try log.readState { stored -> Report? in
                guard try stored.position == fold.folded else { return nil }
                let format = try DecisionStateUpgrade.format(in: stored, state: state)
                guard format == DecisionStateUpgrade.currentFormat else {
                    return Report(head: fold.folded, olderFormat: format)
                }
                return try compare(in: stored)
            }
            if let report { return report }
        }
        throw LogKeptGrowing(attempts: Self.attempts)
    }

    private func compare(in stored: some StateReader) throws -> Report {
        var report = Report(head: fold.folded)
        for table in state.derivedTables {
            let wanted = fold.expected[table.name] ?? [:]
            let keys = wanted.keys.sorted(by: KeyOrder.precedes)
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
                if next < keys.count, KeyOrder.precedes(keys[next], key) {
                    report.mismatch = mismatch(keys[next], "missing: the events put it there")
                    return false
                }
                guard next < keys.count, keys[next] == key, let value = wanted[key] else {
                    report.mismatch = mismatch(key, "stored, but no event puts it there")
                    return false
                }
                guard storedValue.elementsEqual(value.value) else {
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
}

/// The log grew past every fold of an audit: a busy server. Verify a stopped one, or a backup.
public struct LogKeptGrowing: Error, CustomStringConvertible {
    public let attempts: Int
    public var description: String {
        "the log kept growing through \(attempts) tries to compare the decision state; verify a stopped server or a backup"
    }
}
