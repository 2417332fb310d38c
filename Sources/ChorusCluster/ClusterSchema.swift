import Logging
import PostgresNIO

/// The tables and the two functions a cluster keeps in PostgreSQL. Made by the first node that joins (under an advisory
/// lock, so that nodes starting together make them once), checked by every later one.
///
/// - `chorus_head`: one row, the last commit's number and the last event's position. Every append updates it first,
///   which serialises appends: numbers and positions are gapless and in commit order, so a reader that has everything
///   through commit N never finds an N + 1 that commits later behind it.
/// - `chorus_events`: each event's record, exactly the bytes every node's LMDB log stores, by position.
/// - `chorus_commits`: each commit's range of positions, the id its node gave it (to learn whether a commit whose
///   answer was lost went through), and the decision-state changes it made, in order.
/// - `chorus_keys`: each user's data key (an empty key once destroyed); `chorus_secrets`: the session secret.
/// - `chorus_media`: each stored image's files (its variants and its facts), sealed as a node stores them on disk, by
///   image and file name, with the uploader whose erasure removes them.
/// - `chorus_push_lease`: one row, the node that sends pushes and until when; `chorus_push_settled`: each device
///   queue's last push settled, by its log position (``ClusterPushLease``).
enum ClusterSchema {
    /// Bumped when a table or a function changes meaning; a node refuses a database of another version. (A function
    /// added is made by the next node that joins, whatever the version.)
    static let version: Int32 = 1

    /// Taken while making the schema (an arbitrary constant: "chorus" in ASCII).
    static let lockID: Int64 = 0x6368_6f72_7573

    static let statements: [String] = [
        """
        CREATE TABLE IF NOT EXISTS chorus_schema (version integer NOT NULL)
        """,
        """
        CREATE TABLE IF NOT EXISTS chorus_head (
            id integer PRIMARY KEY CHECK (id = 1),
            commit_number bigint NOT NULL,
            position bigint NOT NULL)
        """,
        """
        INSERT INTO chorus_head VALUES (1, 0, 0) ON CONFLICT DO NOTHING
        """,
        """
        CREATE TABLE IF NOT EXISTS chorus_events (position bigint PRIMARY KEY, record bytea NOT NULL)
        """,
        """
        CREATE TABLE IF NOT EXISTS chorus_commits (
            commit_number bigint PRIMARY KEY,
            first_position bigint NOT NULL,
            last_position bigint NOT NULL,
            batch uuid NOT NULL UNIQUE,
            state_changes bytea NOT NULL,
            committed_at timestamptz NOT NULL DEFAULT now())
        """,
        """
        CREATE TABLE IF NOT EXISTS chorus_keys (user_id text PRIMARY KEY, key bytea NOT NULL)
        """,
        """
        CREATE TABLE IF NOT EXISTS chorus_secrets (name text PRIMARY KEY, value bytea NOT NULL)
        """,
        """
        CREATE TABLE IF NOT EXISTS chorus_media (
            media_id text NOT NULL,
            name text NOT NULL,
            owner text NOT NULL,
            bytes bytea NOT NULL,
            PRIMARY KEY (media_id, name))
        """,
        """
        CREATE INDEX IF NOT EXISTS chorus_media_owner ON chorus_media (owner)
        """,
        """
        CREATE TABLE IF NOT EXISTS chorus_push_lease (
            id integer PRIMARY KEY CHECK (id = 1),
            holder text NOT NULL,
            expires_at timestamptz NOT NULL)
        """,
        """
        CREATE TABLE IF NOT EXISTS chorus_push_settled (queue text PRIMARY KEY, position bigint NOT NULL)
        """,
        // One call per batch (postgres-nio does not pipeline). The head row first: a batch decided against an older
        // commit is answered with the current one, negated, and writes nothing; the node catches up and decides again.
        """
        CREATE OR REPLACE FUNCTION chorus_append(
            expected_commit bigint, batch_id uuid, records bytea[], changes bytea) RETURNS bigint
        LANGUAGE plpgsql AS $$
        DECLARE
            n bigint := coalesce(array_length(records, 1), 0);
            base bigint;
        BEGIN
            UPDATE chorus_head SET commit_number = commit_number + 1, position = position + n
                WHERE id = 1 AND commit_number = expected_commit
                RETURNING position - n INTO base;
            IF NOT FOUND THEN
                RETURN -(SELECT commit_number FROM chorus_head WHERE id = 1);
            END IF;
            INSERT INTO chorus_events (position, record)
                SELECT base + t.i, t.r FROM unnest(records) WITH ORDINALITY AS t(r, i);
            INSERT INTO chorus_commits (commit_number, first_position, last_position, batch, state_changes)
                VALUES (expected_commit + 1, base + 1, base + n, batch_id, changes);
            PERFORM pg_notify('chorus_log', (expected_commit + 1)::text);
            RETURN expected_commit + 1;
        END $$
        """,
        // A tailing node's read in one call: the commits after one it has, with their records, up to `max_events`
        // (a larger commit comes without them, read in parts). PL/pgSQL, so each connection plans it once.
        """
        CREATE OR REPLACE FUNCTION chorus_read(after_commit bigint, max_commits integer, max_events bigint)
        RETURNS TABLE (
            commit_number bigint, first_position bigint, last_position bigint, state_changes bytea, records bytea[])
        LANGUAGE plpgsql STABLE AS $$
        #variable_conflict use_column
        BEGIN
            RETURN QUERY
            SELECT c.commit_number, c.first_position, c.last_position, c.state_changes,
                CASE WHEN c.last_position - c.first_position < max_events THEN ARRAY(
                    SELECT e.record FROM chorus_events e
                    WHERE e.position BETWEEN c.first_position AND c.last_position ORDER BY e.position) END
            FROM (
                SELECT n.commit_number, n.first_position, n.last_position, n.state_changes,
                    sum(n.last_position - n.first_position + 1) OVER (ORDER BY n.commit_number)
                        - (n.last_position - n.first_position + 1) AS events_before
                FROM chorus_commits n WHERE n.commit_number > after_commit
                ORDER BY n.commit_number LIMIT max_commits) c
            WHERE c.events_before < max_events
            ORDER BY c.commit_number;
        END $$
        """,
    ]

    /// Makes the schema if the database has none; refuses one of another version.
    static func prepare(_ client: PostgresClient, logger: Logger) async throws {
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(lockID))", logger: logger)
            for statement in statements {
                try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
            }
            let rows = try await connection.query("SELECT version FROM chorus_schema", logger: logger)
            var versions: [Int32] = []
            for try await version in rows.decode(Int32.self) { versions.append(version) }
            if versions.isEmpty {
                try await connection.query("INSERT INTO chorus_schema VALUES (\(version))", logger: logger)
            } else if versions != [version] {
                throw ClusterError(
                    "the database holds a Chorus cluster of schema version \(versions), this Chorus uses \(version)")
            }
        }
    }
}
