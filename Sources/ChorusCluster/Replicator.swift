import ChorusLMDBLog
import ChorusLog
import Logging
import Synchronization

/// Keeps a node's LMDB log a replica of the cluster's: applies each commit (its events exactly as recorded, then its
/// state changes, then its number) in one write, in commit order, whether it came from this node's own append or from
/// tailing PostgreSQL. The replica's state table `cluster` holds the number of the last commit applied, written in
/// the same transaction as the commit, so that a crash never leaves half a commit behind and a restart resumes from
/// the local head.
actor Replicator {
    /// The replica's table of its own bookkeeping.
    static let table = StateTable("cluster")
    private static let commitKey = Array("commit".utf8)
    /// Events fetched and applied per write while catching up.
    private static let eventsPerWrite = 8_192

    let replica: LMDBEventLog
    let database: ClusterDatabase
    /// Told of the events of every commit applied, after it is applied (the node destroys erased users' keys).
    private let onApplied: @Sendable ([RecordedEvent]) -> Void
    /// The newest commit PostgreSQL has announced to this node.
    private let announced = Atomic<UInt64>(0)

    init(replica: LMDBEventLog, database: ClusterDatabase, onApplied: @escaping @Sendable ([RecordedEvent]) -> Void) {
        self.replica = replica
        self.database = database
        self.onApplied = onApplied
    }

    /// The number of the last commit applied to the replica (0 before the first).
    nonisolated func appliedCommit() throws -> UInt64 {
        try replica.readState { try Self.appliedCommit(in: $0) }
    }

    /// Notes a commit PostgreSQL announced (the tail hears of every one, unless its connection is down).
    nonisolated func heard(of commit: UInt64) {
        announced.max(commit, ordering: .relaxed)
    }

    /// Whether the replica may lack commits: one was announced that it has not applied. When it has applied all it was
    /// told of, the writer decides without asking PostgreSQL first; an announcement still in flight only costs an
    /// append that PostgreSQL refuses, and a catch-up then.
    nonisolated func mayBeBehind() throws -> Bool {
        try announced.load(ordering: .relaxed) > appliedCommit()
    }

    static func appliedCommit(in state: some StateReader) throws -> UInt64 {
        try state.withValue(for: commitKey, in: table) { value in
            value.map { $0.reduce(UInt64(0)) { $0 << 8 | UInt64($1) } } ?? 0
        }
    }

    static func recordApplied(_ commit: UInt64, in state: some StateWriter) throws {
        try state.put(
            (0..<8).map { UInt8(truncatingIfNeeded: commit >> (56 - 8 * UInt64($0))) }, for: commitKey, in: table)
    }

    /// Applies every commit PostgreSQL holds past the replica's, in order; returns the last commit applied. One round
    /// trip brings commits with their events (``ClusterDatabase/commitsWithRecords(after:limit:events:)``); a commit
    /// too large to come whole is read in parts.
    @discardableResult
    func catchUp() async throws -> UInt64 {
        while true {
            let applied = try appliedCommit()
            let found = try await database.commitsWithRecords(after: applied, limit: 256, events: Self.eventsPerWrite)
            guard !found.isEmpty else { return applied }
            var whole: [(ClusterCommit, [RecordedEvent])] = []
            for (commit, records) in found {
                guard let records else {
                    if !whole.isEmpty { try await apply(whole) }
                    whole = []
                    try await applyInParts(commit)
                    continue
                }
                guard records.count == commit.eventCount else {
                    throw ClusterError(
                        "the cluster's database holds \(records.count) of the \(commit.eventCount) events of commit "
                            + "\(commit.number)")
                }
                whole.append((commit, try records.map { try RecordedEvent(record: $0) }))
            }
            if !whole.isEmpty { try await apply(whole) }
        }
    }

    /// Applies `commit`, too large to come whole, a chunk of its events per write: the commit's state changes and number
    /// go with its last chunk, so a replica never holds them without all its events.
    private func applyInParts(_ commit: ClusterCommit) async throws {
        var next = max(commit.firstPosition, replica.head.rawValue + 1)
        guard next <= commit.lastPosition else { return try await apply([(commit, [])]) }
        while next <= commit.lastPosition {
            let through = min(commit.lastPosition, next + UInt64(Self.eventsPerWrite) - 1)
            let events = try await database.records(from: next, through: through).map { try RecordedEvent(record: $0) }
            guard events.count == Int(through - next + 1), events.first?.position.rawValue == next else {
                throw ClusterError("the cluster's database is missing events \(next) through \(through)")
            }
            try await applySegments([(through == commit.lastPosition ? commit : nil, events)])
            next = through + 1
        }
    }

    /// Applies commits whose events are at hand (this node's own append).
    func apply(_ commits: [(ClusterCommit, [RecordedEvent])]) async throws {
        try await applySegments(commits.map { (Optional($0.0), $0.1) })
    }

    /// One write: each segment's events not yet in the replica, then, for a segment that completes its commit, the
    /// commit's state changes and number. What the replica already has is skipped, so a commit applied by the
    /// tailer before its own node got to it is not applied twice.
    private func applySegments(_ segments: [(ClusterCommit?, [RecordedEvent])]) async throws {
        let count = segments.reduce(0) { $0 + $1.1.count }
        let appliedEvents: [RecordedEvent] = try await replica.append(.nonDurableBulkImport, eventCount: count) {
            batch in
            var appliedEvents: [RecordedEvent] = []
            for (commit, events) in segments {
                if let commit, try Self.appliedCommit(in: batch.state) >= commit.number { continue }
                let fresh = events.drop { $0.position <= batch.head }
                if let first = fresh.first, first.position != batch.head.next {
                    throw ClusterError(
                        "the replica is at \(batch.head) and the next event to apply is \(first.position)")
                }
                var start = fresh.startIndex
                while start < fresh.endIndex {
                    let command = fresh[start...].prefix {
                        $0.commandID == fresh[start].commandID && $0.stream == fresh[start].stream
                    }
                    try batch.appendRecorded(Array(command))
                    start += command.count
                }
                appliedEvents += fresh
                guard let commit else { continue }
                guard batch.head.rawValue == commit.lastPosition || commit.eventCount == 0 else {
                    throw ClusterError(
                        "commit \(commit.number) ends at \(commit.lastPosition), the replica at \(batch.head)")
                }
                for change in try StateChange.decode(commit.changes) {
                    if let value = change.value {
                        try batch.state.put(value, for: change.key, in: StateTable(change.table))
                    } else {
                        try batch.state.delete(change.key, in: StateTable(change.table))
                    }
                }
                try Self.recordApplied(commit.number, in: batch.state)
            }
            return appliedEvents
        }
        if !appliedEvents.isEmpty { onApplied(appliedEvents) }
    }
}
