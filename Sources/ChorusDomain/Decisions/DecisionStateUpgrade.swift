import ChorusLog

/// Brings the decision state of a log an older Chorus wrote to this one's format: the derived tables are folded again
/// from the log (as `chorus log verify` does) and written, with the new format, in one write of the log. Idempotency
/// records are kept as they are. Runs once per log, before its first decision (``CommandExecutor`` and
/// ``RecordedEventImporter`` see to it); a new log just has its format stamped.
///
/// Formats: 1, the first (no `format` table; posts kept their author alone or with one flag byte, follows and likes
/// without their position, no comments or reposts); 2, since posts and comments can be deleted; 3, since e-mails are
/// kept as their key (``Validate/emailKey(_:)``) and accounts can be deleted; 4, since conversations keep the position
/// of their last message (`conversation-heads`), which a read receipt is decided against; 5, since a report of what
/// its reporter has an open report of is that report (`report-subjects`); 6, since posts keep their images' ids and
/// the images that posts and profiles show are known (`attached-media`); 7, since accounts have handles (`handles`,
/// `user-handles`), which those registered before get when the log is folded (``Handles/ofEarlierAccount(_:)``).
public struct DecisionStateUpgrade: Sendable {
    /// The format this Chorus writes.
    public static let currentFormat: UInt32 = 7
    private static let versionKey = Array("version".utf8)

    private let log: any EventLog
    private let state = DecisionState()

    private let keys: any PersonalDataKeys

    public init(log: any EventLog, keys: any PersonalDataKeys) {
        self.log = log
        self.keys = keys
    }

    /// The format of the state stored beside the log.
    public func storedFormat() throws -> UInt32 {
        let state = self.state
        return try log.readState { try Self.format(in: $0, state: state) }
    }

    /// Recomputes the state if an older Chorus wrote it; returns whether it did. `progress` gets the position folded
    /// and the head.
    @discardableResult
    public func run(progress: @escaping @Sendable (LogPosition, LogPosition) -> Void = { _, _ in }) async throws
        -> Bool
    {
        guard try storedFormat() < Self.currentFormat else { return false }
        var fold = DecisionStateFold()
        let state = self.state
        // The log may still grow (an import under way): fold what it holds, then write if nothing came after it.
        while true {
            try fold.fold(log, keys: keys, through: log.head, progress: progress)
            let folded = fold
            let written = try await log.append(.durable, eventCount: 0) { batch -> Bool in
                guard batch.head == folded.folded else { return false }
                try Self.write(folded, state: state, in: batch.state)
                return true
            }
            if written { return true }
        }
    }

    /// Stamps this Chorus's format: called with the first events of a log, so that it is never mistaken for an old
    /// one.
    static func stamp(in writer: any StateWriter, state: DecisionState) throws {
        try writer.put(formatValue(currentFormat), for: versionKey, in: state.format)
    }

    static func format(in reader: some StateReader, state: DecisionState) throws -> UInt32 {
        let stored = try reader.withValue(for: versionKey, in: state.format) { value in
            value.map { $0.count == 4 ? UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self)) : 0 }
        }
        if let stored { return stored }
        // No format: a log from before there was one, unless nothing was ever written.
        return try reader.position == .start ? currentFormat : 1
    }

    private static func write(_ fold: DecisionStateFold, state: DecisionState, in writer: any StateWriter) throws {
        for table in state.derivedTables {
            var stale: [[UInt8]] = []
            try writer.forEach(in: table) { key, _ in
                stale.append(Array(key))
                return true
            }
            for key in stale { try writer.delete(key, in: table) }
            for entry in fold.entries(of: table) { try writer.put(entry.value, for: entry.key, in: table) }
        }
        try stamp(in: writer, state: state)
    }

    private static func formatValue(_ format: UInt32) -> [UInt8] {
        withUnsafeBytes(of: format.littleEndian, Array.init)
    }
}
