import Foundation
import PostgresNIO

/// Makes one node of a cluster the one that sends pushes, and lets the next one go on where it stopped. Every node
/// follows the log into a push outbox of its own; only the lease's holder sends from it.
///
/// - `chorus_push_lease`: the holder and until when it holds, by PostgreSQL's clock. The holder renews it every second
///   for ``term``; a node takes it once it has expired, so a holder that died is replaced within a term.
/// - `chorus_push_settled`: each device queue's last push settled (delivered, or given up), by log position. The holder
///   records each batch's; a node that takes the lease, and every node now and then, takes those out of its outbox, so
///   a push the last holder delivered is not sent again.
public struct ClusterPushLease: Sendable {
    /// How long a lease lasts unless renewed.
    public static let term: Duration = .seconds(5)

    private let database: ClusterDatabase
    /// This node's name in the lease: unique per run.
    public let node = UUID().uuidString.lowercased()

    public init(database: ClusterDatabase) { self.database = database }

    /// Takes the lease, or renews it if this node holds it; answers whether this node holds it now, for ``term``.
    public func acquire() async throws -> Bool {
        let seconds = Double(Self.term.components.seconds)
        let rows = try await database.rows(
            """
            INSERT INTO chorus_push_lease VALUES (1, \(node), now() + make_interval(secs => \(seconds)))
            ON CONFLICT (id) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
                WHERE chorus_push_lease.holder = excluded.holder OR chorus_push_lease.expires_at < now()
            RETURNING holder
            """)
        return !rows.isEmpty
    }

    /// Gives the lease up (the node stops): another node takes it at once rather than after its term.
    public func release() async throws {
        _ = try await database.rows("DELETE FROM chorus_push_lease WHERE holder = \(node)")
    }

    /// Records that each queue's pushes through its position are settled.
    public func settled(_ positions: [String: UInt64]) async throws {
        guard !positions.isEmpty else { return }
        let queues = Array(positions.keys)
        let settled = queues.map { Int64(positions[$0]!) }
        _ = try await database.rows(
            """
            INSERT INTO chorus_push_settled SELECT * FROM unnest(\(queues)::text[], \(settled)::bigint[])
            ON CONFLICT (queue) DO UPDATE SET position = greatest(chorus_push_settled.position, excluded.position)
            """)
    }

    /// Every queue's last settled position.
    public func settledPositions() async throws -> [String: UInt64] {
        var positions: [String: UInt64] = [:]
        for row in try await database.rows("SELECT queue, position FROM chorus_push_settled") {
            let (queue, position) = try row.decode((String, Int64).self)
            positions[queue] = UInt64(max(0, position))
        }
        return positions
    }
}
