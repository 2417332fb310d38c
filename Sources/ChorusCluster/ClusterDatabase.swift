import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import Synchronization

/// The cluster's PostgreSQL, as the nodes use it: appends, the commits and events to tail, keys and secrets. Its pool
/// runs while ``run()`` runs, on an event loop of its own; the data keys, asked for synchronously, go through a
/// connection of their own on that loop (``BlockingConnection``), so that a thread blocked waiting for a key never
/// blocks what brings the answer.
public final class ClusterDatabase: Sendable {
    public let address: ClusterAddress
    let client: PostgresClient
    let logger: Logger
    private let eventLoops: MultiThreadedEventLoopGroup
    /// How long a statement may take (a lock wait included) before it fails. PostgresNIO 1.33 has been seen to leave a
    /// statement sent as PostgreSQL crashed unanswered for good; the node's writer waits on it meanwhile, so the margin
    /// past the lock wait is short: statements take milliseconds.
    private let statementDeadline: Duration
    /// The data keys' connection: they are asked for synchronously.
    private let keyConnection: BlockingConnection
    /// The images' connection, asked synchronously too (``ClusterMediaFiles``), apart so that no key waits for an
    /// image's bytes.
    let mediaConnection: BlockingConnection
    /// The statements awaiting their answers, by a number of their own.
    private let inFlight = Mutex<(next: Int, answers: [Int: PendingAnswer])>((0, [:]))
    /// False from the moment the tail's listener loses its connection until it has one again: statements then fail at
    /// once instead of queueing for a connection (PostgresNIO 1.33 has been seen to leave a statement queued while the
    /// server was down unanswered for good, after the server came back).
    private let reachable = Atomic<Bool>(true)

    /// `lockTimeout`: how long an append waits for the head row (another session holding it) before it fails.
    public init(address: ClusterAddress, lockTimeout: Duration = .seconds(5), logger: Logger) {
        self.address = address
        self.logger = logger
        statementDeadline = lockTimeout + .seconds(5)
        eventLoops = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        client = PostgresClient(
            configuration: address.clientConfiguration(lockTimeout: lockTimeout), eventLoopGroup: eventLoops,
            backgroundLogger: logger)
        keyConnection = BlockingConnection(
            eventLoop: eventLoops.next(), configuration: address.connectionConfiguration(), logger: logger)
        mediaConnection = BlockingConnection(
            eventLoop: eventLoops.next(), configuration: address.connectionConfiguration(), logger: logger)
    }

    deinit {
        keyConnection.close()
        mediaConnection.close()
        try? eventLoops.syncShutdownGracefully()
    }

    /// Runs the connection pool until the task is cancelled.
    public func run() async { await client.run() }

    /// Makes the schema if the database has none (the first node), and checks its version.
    public func prepareSchema() async throws {
        try await ClusterSchema.prepare(client, logger: logger)
    }

    /// The last commit's number and the last event's position.
    public func head() async throws -> (commit: UInt64, position: UInt64) {
        for row in try await rows("SELECT commit_number, position FROM chorus_head WHERE id = 1") {
            let (commit, position) = try row.decode((Int64, Int64).self)
            return (UInt64(commit), UInt64(position))
        }
        throw ClusterError("the cluster's database has no chorus_head row")
    }

    /// Commits `records` and `changes` as the commit after `expectedCommit`: its number, or nil when another commit
    /// came first (nothing written).
    func append(expectedCommit: UInt64, batch: UUID, records: [[UInt8]], changes: [UInt8]) async throws -> UInt64? {
        let buffers = records.map { ByteBuffer(bytes: $0) }
        let answers = try await rows(
            "SELECT chorus_append(\(Int64(expectedCommit)), \(batch), \(buffers), \(ByteBuffer(bytes: changes)))")
        for row in answers {
            let answer = try row.decode(Int64.self)
            if answer > 0 { return UInt64(answer) }
            // Another commit came first, unless the cluster is behind this node: then it lost commits the node applied.
            guard UInt64(-answer) >= expectedCommit else {
                throw ClusterError(
                    "PostgreSQL's log ends at commit \(-answer), before this node's replica (commit \(expectedCommit)): "
                        + "the cluster lost commits this node applied (a failover to a standby that was not "
                        + "synchronous?); this node takes no writes until its data directory is rebuilt from the cluster"
                )
            }
            return nil
        }
        throw ClusterError("chorus_append answered nothing")
    }

    /// The number of the commit its node called `batch`, if it committed. Asked once PostgreSQL can be reached again
    /// (within the statement deadline), since the answer decides what the node tells its client.
    func commitNumber(ofBatch batch: UUID) async throws -> UInt64? {
        let clock = ContinuousClock()
        let giveUp = clock.now + statementDeadline
        while !reachable.load(ordering: .relaxed), clock.now < giveUp { try await Task.sleep(for: .milliseconds(50)) }
        return try await rows("SELECT commit_number FROM chorus_commits WHERE batch = \(batch)").first.map {
            UInt64(try $0.decode(Int64.self))
        }
    }

    /// Up to `limit` commits after `commit`, in order, each with its events' records: as many commits as start within
    /// `events` events of the first (at least one). A commit of more events than that comes without its records (nil),
    /// to be read in parts with ``records(from:through:)``.
    func commitsWithRecords(after commit: UInt64, limit: Int, events: Int) async throws
        -> [(commit: ClusterCommit, records: [[UInt8]]?)]
    {
        let found = try await rows(
            "SELECT * FROM chorus_read(\(Int64(commit)), \(Int32(limit)), \(Int64(events)))")
        var commits: [(commit: ClusterCommit, records: [[UInt8]]?)] = []
        for row in found {
            let (number, first, last, changes, records) = try row.decode(
                (Int64, Int64, Int64, ByteBuffer, [ByteBuffer]?).self)
            let commit = ClusterCommit(
                number: UInt64(number), firstPosition: UInt64(first), lastPosition: UInt64(last),
                changes: Array(buffer: changes))
            commits.append((commit, records?.map { Array(buffer: $0) }))
        }
        return commits
    }

    /// The records of positions `first` through `last`, in order.
    public func records(from first: UInt64, through last: UInt64) async throws -> [[UInt8]] {
        try await rows(
            """
            SELECT record FROM chorus_events WHERE position BETWEEN \(Int64(first)) AND \(Int64(last))
            ORDER BY position
            """
        ).map { Array(buffer: try $0.decode(ByteBuffer.self)) }
    }

    /// The secret called `name`, made from `proposed` by the first node that asks.
    public func secret(named name: String, proposing proposed: [UInt8]) async throws -> [UInt8] {
        _ = try await rows(
            "INSERT INTO chorus_secrets VALUES (\(name), \(ByteBuffer(bytes: proposed))) ON CONFLICT DO NOTHING")
        for row in try await rows("SELECT value FROM chorus_secrets WHERE name = \(name)") {
            return Array(buffer: try row.decode(ByteBuffer.self))
        }
        throw ClusterError("the secret \(name) could not be stored")
    }

    /// Every row `query` answers, or a ``ClusterError`` once `statementDeadline` has passed without them, or once
    /// ``connectionLost(_:)`` is called: PostgresNIO has no statement timeout of its own, and a statement on a
    /// connection that died without a word (PostgreSQL crashed under it) would otherwise hold the writer or the tail for
    /// good. The statement's task is cancelled and left behind; the caller goes on at once.
    func rows(_ query: PostgresQuery) async throws -> [PostgresRow] {
        let client = self.client
        let logger = self.logger
        let limit = statementDeadline
        guard reachable.load(ordering: .relaxed) else {
            throw ClusterError("PostgreSQL cannot be reached; the node is reconnecting")
        }
        let answer = PendingAnswer()
        let number = inFlight.withLock { inFlight in
            defer { inFlight.next += 1 }
            return inFlight.next
        }
        defer { _ = inFlight.withLock { $0.answers.removeValue(forKey: number) } }
        return try await withCheckedThrowingContinuation { continuation in
            answer.wait(continuation)
            inFlight.withLock { $0.answers[number] = answer }
            let statement = Task {
                do {
                    var collected: [PostgresRow] = []
                    for try await row in try await client.query(query, logger: logger) { collected.append(row) }
                    answer.resume(with: .success(collected))
                } catch {
                    answer.resume(with: .failure(error))
                }
            }
            // A statement that cannot be cancelled (its connection silently gone) is abandoned, not awaited: hence
            // unstructured tasks rather than a task group, which would wait for it.
            answer.limit(
                Task {
                    try await Task.sleep(for: limit)
                    statement.cancel()
                    answer.resume(with: .failure(ClusterError("PostgreSQL did not answer within \(limit)")))
                })
        }
    }

    /// The tail's listener lost its connection: PostgreSQL is down or unreachable, and the statements in flight may
    /// never be answered. Fails them, and every statement until ``connectionRestored()``. An append failed this way is
    /// looked up by its batch id once PostgreSQL is back (``ClusterEventLog``).
    func connectionLost(_ cause: String) {
        reachable.store(false, ordering: .relaxed)
        let answers = inFlight.withLock { Array($0.answers.values) }
        for answer in answers {
            answer.resume(with: .failure(ClusterError("the connection to PostgreSQL broke (\(cause))")))
        }
    }

    /// The tail's listener is connected again.
    func connectionRestored() {
        reachable.store(true, ordering: .relaxed)
    }

    /// The user's data key: empty once destroyed, nil if they never had one.
    func key(of user: String) throws -> [UInt8]? {
        let rows = try keyConnection.query("SELECT key FROM chorus_keys WHERE user_id = \(user)")
        return try rows.first.map { Array(buffer: try $0.decode(ByteBuffer.self)) }
    }

    /// Stores `proposed` as the user's key unless they have one: the key they have now.
    func makeKey(of user: String, proposing proposed: [UInt8]) throws -> [UInt8] {
        _ = try keyConnection.query(
            "INSERT INTO chorus_keys VALUES (\(user), \(ByteBuffer(bytes: proposed))) ON CONFLICT DO NOTHING")
        guard let key = try key(of: user) else { throw ClusterError("the key of \(user) could not be stored") }
        return key
    }

    /// Destroys the user's key for good.
    func destroyKey(of user: String) throws {
        _ = try keyConnection.query(
            """
            INSERT INTO chorus_keys VALUES (\(user), ''::bytea)
            ON CONFLICT (user_id) DO UPDATE SET key = ''::bytea
            """)
    }
}

/// A statement's answer awaited by one caller: resumed once, by the statement, its deadline or a lost connection,
/// whichever comes first; the deadline's timer is stopped as soon as the answer is in.
private final class PendingAnswer: Sendable {
    private struct State {
        /// Nil once the answer is in (it is set before the statement starts).
        var continuation: CheckedContinuation<[PostgresRow], any Error>?
        var timer: Task<Void, any Error>?
    }
    private let state = Mutex(State())

    func wait(_ continuation: CheckedContinuation<[PostgresRow], any Error>) {
        state.withLock { $0.continuation = continuation }
    }

    func limit(_ timer: Task<Void, any Error>) {
        let answered = state.withLock { state in
            if state.continuation != nil { state.timer = timer }
            return state.continuation == nil
        }
        if answered { timer.cancel() }
    }

    func resume(with result: Result<[PostgresRow], any Error>) {
        let (continuation, timer) = state.withLock { state in
            defer { (state.continuation, state.timer) = (nil, nil) }
            return (state.continuation, state.timer)
        }
        timer?.cancel()
        continuation?.resume(with: result)
    }
}
