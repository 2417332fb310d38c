import ChorusLMDBLog
import ChorusLog
import Foundation
import Logging
import PostgresNIO

/// Moves a single node's log into an empty cluster (`chorus cluster init --from DIR`): every event at its own
/// position, the whole decision state as the first commit's changes, every data key and the session secret, in one
/// PostgreSQL transaction (a failure leaves the database as it was). The node's log is then marked as having applied
/// that commit, so its data directory can serve as the cluster's first node without copying anything back.
public enum ClusterSeed {
    /// Events per INSERT.
    static let eventsPerStatement = 4_096

    public struct Summary: Sendable {
        public let events: UInt64
        public let stateEntries: Int
        public let keys: Int
    }

    /// - Parameters:
    ///   - log: the node's log, opened for writing with ``ClusterEventLog/replicaStateTables`` among its tables, its
    ///     writer running.
    ///   - stateTables: the domain's decision-state tables, copied whole.
    ///   - progress: told the number of events copied so far.
    /// - Throws: ``ClusterError`` when the cluster already holds a log.
    public static func seed(
        _ database: ClusterDatabase, from log: LMDBEventLog, stateTables: [String],
        keys: [(user: String, key: [UInt8])],
        sessionSecret: [UInt8], progress: (UInt64) -> Void
    ) async throws -> Summary {
        try await database.prepareSchema()
        let head = log.head.rawValue
        let changes = try log.readState { state in
            var changes: [StateChange] = []
            for table in stateTables {
                try state.forEach(in: StateTable(table)) { key, value in
                    changes.append(StateChange(table: table, key: Array(key), value: Array(value)))
                    return true
                }
            }
            return changes
        }
        let logger = database.logger
        try await database.client.withTransaction(logger: logger) { connection in
            let rows = try await connection.query(
                "SELECT commit_number FROM chorus_head WHERE id = 1 FOR UPDATE", logger: logger)
            for try await commit in rows.decode(Int64.self) where commit != 0 {
                throw ClusterError("the cluster already holds a log (\(commit) commits): init needs an empty one")
            }
            var next: UInt64 = 1
            while next <= head {
                let events = try log.read(from: LogPosition(next), limit: Self.eventsPerStatement)
                let records = events.map { ByteBuffer(bytes: $0.record) }
                try await connection.query(
                    """
                    INSERT INTO chorus_events (position, record)
                    SELECT \(Int64(next)) - 1 + t.i, t.r FROM unnest(\(records)::bytea[]) WITH ORDINALITY AS t(r, i)
                    """, logger: logger)
                next += UInt64(events.count)
                progress(next - 1)
            }
            try await connection.query(
                """
                INSERT INTO chorus_commits (commit_number, first_position, last_position, batch, state_changes)
                VALUES (1, 1, \(Int64(head)), \(UUID()), \(ByteBuffer(bytes: StateChange.encode(changes))))
                """, logger: logger)
            try await connection.query(
                "UPDATE chorus_head SET commit_number = 1, position = \(Int64(head)) WHERE id = 1", logger: logger)
            for (user, key) in keys {
                try await connection.query(
                    "INSERT INTO chorus_keys VALUES (\(user), \(ByteBuffer(bytes: key))) ON CONFLICT DO NOTHING",
                    logger: logger)
            }
            try await connection.query(
                """
                INSERT INTO chorus_secrets VALUES ('session', \(ByteBuffer(bytes: sessionSecret)))
                ON CONFLICT (name) DO UPDATE SET value = excluded.value
                """, logger: logger)
        }
        try await log.append(.durable, eventCount: 0) { batch in try Replicator.recordApplied(1, in: batch.state) }
        return Summary(events: head, stateEntries: changes.count, keys: keys.count)
    }
}
