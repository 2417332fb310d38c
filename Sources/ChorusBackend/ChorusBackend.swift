import ChorusCluster
import ChorusDataKeys
import ChorusDomain
import ChorusLMDBLog
import ChorusLog
import ChorusProjections
import Logging
import ServiceLifecycle

/// Everything behind the API, opened from one data directory: the log and its decisions, the read models, the media,
/// the session secret, and the first responses to idempotent requests. The composition root: what it composes
/// (``services``) runs in the server's service group, and what it refuses it throws as domain errors, which the HTTP
/// API turns into answers.
public final class ChorusBackend: Sendable {
    public let data: DataDirectory
    /// The log, through its seam: everything above the composition root uses only this.
    public let log: any EventLog
    public let commands: CommandExecutor
    /// The read models being served; an online rebuild replaces them.
    public let readModels: ServedReadModels
    public let media: MediaStore
    /// Each user's data key: this directory's ``DataKeyStore``, or in a cluster the cluster's keys cached in it.
    public let keys: any PersonalDataKeys
    /// This directory's own store of data keys (in a cluster, the cache of the cluster's).
    public let keyStore: DataKeyStore
    /// How long after an account deletion every file is rid of the account's personal data, at most.
    public let erasureDelay: Duration
    /// How long an uploaded image waits to be shown by a post or a profile before it is removed.
    public let unattachedMediaLifetime: Duration
    public let tokens: SessionTokens
    package let metrics = ChorusMetrics()
    /// Writes are refused while the read models are further behind the log than this many events (see ``execute``).
    public let maximumWriteLag: UInt64
    package let responses: StoredResponses
    /// The newest events decoded once for all live streams.
    public let liveEvents: DecodedEventWindow
    let activity: SessionActivity
    /// The embedded log behind ``log`` (in a cluster, this node's replica), whose files the backend closes.
    private let embeddedLog: LMDBEventLog
    /// In a cluster, the log ``log`` is: it runs the replica's writer.
    private let clusterLog: ClusterEventLog?
    /// In a cluster, its PostgreSQL.
    public let cluster: ClusterDatabase?

    var embeddedLogIsReadOnly: Bool { embeddedLog.isReadOnly }
    private let logger: Logger

    /// The engine answering now (see ``readModels``).
    public var projections: ProjectionEngine { readModels.current }

    /// Opens (creating if needed) the backend in `data`. With `readOnly`, the log is only read (a past state made by
    /// `chorus replay --into`, or a copy): nothing can be appended. Past `maximumLogSize` bytes every append fails.
    /// With `cluster`, the node's log is a replica of the cluster's (``ClusterEventLog``): call ``joinCluster(_:data:)``
    /// first, and run the database's pool for as long as the backend is open.
    /// The log is written and the read models follow it while ``services`` run (the server's service group runs
    /// them). `maximumWriteLag`: 10,000 events is a fraction of a second of the read models' work, and far beyond
    /// what they lag under load (a few hundred events at most under `chorus bench soak`). `fanOutLimit`: the followers
    /// from which on an author's posts are merged into feeds when read instead of written into each.
    public init(
        data: DataDirectory, readOnly: Bool = false, maximumLogSize: Int? = nil, maximumWriteLag: UInt64 = 10_000,
        fanOutLimit: Int = ProjectionEngine.defaultFanOutLimit,
        erasureDelay: Duration = .seconds(600), unattachedMediaLifetime: Duration = .seconds(24 * 3600),
        passwordHasher: PasswordHasher = PasswordHasher(), cluster: ClusterDatabase? = nil, logger: Logger
    ) throws {
        self.data = data
        self.maximumWriteLag = maximumWriteLag
        self.erasureDelay = erasureDelay
        self.unattachedMediaLifetime = unattachedMediaLifetime
        let metrics = self.metrics
        // Commands are appended from HTTP handlers running on NIO's event loops: they hand every append to the
        // writer thread rather than wait on an fsync there.
        let embedded = try data.openLog(
            readOnly: readOnly, maximumSize: maximumLogSize, replica: cluster != nil, callersCommitWhenAlone: false,
            commitObserver: { metrics.recordCommit($0) })
        let log: any EventLog
        do {
            let keyStore = try data.openKeys()
            self.keyStore = keyStore
            self.cluster = cluster
            if let cluster {
                let keys = ClusterDataKeys(local: keyStore, database: cluster)
                self.keys = keys
                let media = try MediaStore(
                    directory: data.media, keys: keys, shared: ClusterMediaFiles(database: cluster))
                self.media = media
                let clusterLog = ClusterEventLog(
                    replica: embedded, database: cluster, logger: logger,
                    onApplied: { Self.applyOtherNodesErasures(in: $0, keys: keys, media: media, logger: logger) },
                    commitObserver: { metrics.recordClusterCommit($0) })
                self.clusterLog = clusterLog
                log = clusterLog
            } else {
                keys = keyStore
                media = try MediaStore(directory: data.media, keys: keys)
                clusterLog = nil
                log = embedded
            }
            commands = CommandExecutor(log: log, keys: keys, media: self.media, passwordHasher: passwordHasher)
            tokens = SessionTokens(secret: try data.sessionSecretBytes())
            readModels = try ServedReadModels(
                log: log, keys: keys, dataDirectory: data.root, fanOutLimit: fanOutLimit, logger: logger)
            // A start far behind the log (the first after an import, or with its read models lost) folds in events of
            // nearly every user: their keys are read at once, as `chorus projections rebuild` reads them.
            if readModels.current.lag >= UInt64(try keyStore.count()) { try keyStore.preload() }
            responses = try StoredResponses(directory: data.responses)
            activity = SessionActivity(path: data.sessionActivity)
        } catch {
            embedded.close()
            throw error
        }
        self.log = log
        liveEvents = DecodedEventWindow(log: log, keys: keys)
        embeddedLog = embedded
        self.logger = logger
    }

    /// Makes the cluster's schema if it has none (the first node), and takes the cluster's session secret into
    /// `data`, so that a token one node signs every node accepts. The database's pool must be running.
    public static func joinCluster(_ cluster: ClusterDatabase, data: DataDirectory) async throws {
        try await cluster.prepareSchema()
        let secret = try await cluster.secret(named: "session", proposing: try data.sessionSecretBytes())
        try data.adoptSessionSecret(secret)
    }

    /// On every node but the one that decided them, what another node erased is dropped as it is applied: a deleted
    /// account's cached data key (if that fails, the key stays readable on this node until its erasure runs, logged)
    /// and images, and the copy of an image removed unattached.
    private static func applyOtherNodesErasures(
        in events: [RecordedEvent], keys: ClusterDataKeys, media: MediaStore, logger: Logger
    ) {
        for event in events where event.type == "AccountDeleted" || event.type == "MediaRemoved" {
            do {
                switch try DomainEvent(decoding: event, keys: keys) {
                case .accountDeleted(let deleted):
                    try keys.forget(deleted.user)
                    try media.removeAll(of: deleted.user)
                case .mediaRemoved(let removed): media.remove(removed.media)
                default: break
                }
            } catch {
                logger.error(
                    "could not drop what another node erased",
                    metadata: ["position": "\(event.position)", "error": "\(error)"])
            }
        }
    }

    /// What keeps the backend running, for a service group: the log's writer, the read models following the log, the
    /// erasures of deleted accounts, which `holders` (what the server keeps beside the backend) take part in, and the
    /// upkeep of images (old uploads upgraded, unattached ones removed). In
    /// reverse order on shutdown: the read models stop, then the writer commits what it holds.
    public func services(holdingPersonalData holders: [any PersonalDataHolder] = []) -> [any Service] {
        [
            logWriterService, projectionService, stateUpgradeService,
            ErasureService(backend: self, holders: holders, logger: logger),
            MediaUpgradeService(
                media: media, log: log, keys: keys, readOnly: embeddedLog.isReadOnly, logger: logger),
            UnattachedMediaService(
                commands: commands, media: media, lifetime: unattachedMediaLifetime, readOnly: embeddedLog.isReadOnly,
                logger: logger),
        ]
    }

    /// Recomputes a decision state an older Chorus wrote, at start rather than in the first write's request.
    var stateUpgradeService: any Service {
        DecisionStateUpgradeService(log: embeddedLog, commands: commands, logger: logger)
    }

    /// The log's writer: until it runs, appends wait.
    public var logWriterService: any Service {
        if let clusterLog { return ClusterLogService(log: clusterLog) }
        return LogWriterService(log: embeddedLog)
    }

    /// The read models following the log, and the online rebuilds asked for: until it runs, they stand still.
    public var projectionService: any Service { ProjectionService(readModels: readModels) }

    /// Executes `command`, unless the read models cannot apply the log (a full disk) or are far behind it (an
    /// overload, or a start after the log grew without them): every write's answer waits for them, at most 5 s, so
    /// the command would be appended and still answered 503. Refused, it appends nothing.
    ///
    /// - Throws: ``DomainError`` when the command is refused, ``WritesUnavailable`` when no write can be taken now,
    ///   and what ``CommandExecutor/execute(_:idempotencyKey:durability:)`` throws.
    public func execute(_ command: Command, idempotencyKey: String?) async throws -> CommandResult {
        let engine = readModels.current
        guard engine.applyFailure == nil else {
            throw WritesUnavailable(
                "the server cannot take writes now: its read models cannot apply the log; retry later")
        }
        let lag = engine.lag
        guard lag <= maximumWriteLag else {
            throw WritesUnavailable(
                "the server cannot take writes now: its read models are \(lag) events behind the log; retry shortly")
        }
        do {
            return try await commands.execute(command, idempotencyKey: idempotencyKey)
        } catch let error as ClusterError {
            throw WritesUnavailable("the server cannot take writes now: \(error.description); retry shortly")
        }
    }

    /// The user a bearer token speaks for: its MAC is ours and its session has neither ended nor expired. The session
    /// counts as seen now.
    ///
    /// On a cluster node, a session opened on another node a moment ago may not have reached this replica yet (a
    /// client behind a load balancer signs in on one node and calls the next). Its MAC is the cluster's own, so such a
    /// token is worth one catch-up with the cluster before it is refused; a forged token never gets that far.
    public func user(forToken token: String) async throws -> (user: UserID, session: SessionID)? {
        guard let session = tokens.session(fromToken: token) else { return nil }
        var user = try commands.user(ofSession: session)
        if user == nil, let clusterLog, (try? await clusterLog.catchUp()) != nil {
            user = try commands.user(ofSession: session)
        }
        guard let user else { return nil }
        activity.record(session)
        return (user, session)
    }

    /// Whether `session` of `user` has neither ended nor expired: asked again by what outlives the request that
    /// checked its token (a live stream).
    public func isLive(_ session: SessionID, of user: UserID) throws -> Bool {
        try commands.user(ofSession: session) == user
    }

    /// The log's head, once it has reached `position` if it can: a cluster node that is behind catches up with the
    /// cluster first (a client may have seen the position on another node).
    public func head(reaching position: LogPosition) async -> LogPosition {
        if position > log.head, let clusterLog { _ = try? await clusterLog.catchUp() }
        return log.head
    }

    /// `user`'s sessions that have neither ended nor expired, newest first, each with when it started and when it was
    /// last seen (to the minute; its start if not seen since the server started, or before a crash).
    public func sessions(of user: UserID) throws -> [(session: SessionID, startedAt: EventTime, lastSeenAt: EventTime)]
    {
        try commands.sessions(of: user).map { found in
            let seen = activity.lastSeen(found.session)
            return (found.session, found.startedAt, max(found.startedAt, seen ?? found.startedAt))
        }
    }

    /// Syncs and closes the read models, then closes the stored responses and the log (after its writer has
    /// committed what it holds).
    public func close() {
        // If the sync fails, the read models are rebuilt at the next start after a crash of the machine.
        try? readModels.close()
        // Lost if it fails: the sessions show their sign-in time instead.
        let commands = self.commands
        try? activity.save(keeping: { (try? commands.user(ofSession: $0)) != nil })
        responses.close()
        keyStore.close()
        embeddedLog.close()
    }
}

/// No write can be taken now (the read models cannot apply the log, or are far behind it); nothing was appended,
/// and the same write may succeed shortly.
public struct WritesUnavailable: Error, Sendable, CustomStringConvertible {
    public let description: String

    init(_ description: String) { self.description = description }
}

/// The log's writer as a service: on graceful shutdown it commits what is queued and stops.
struct LogWriterService: Service {
    let log: LMDBEventLog

    func run() async {
        guard !log.isReadOnly else {
            // No writer to run; a service still runs until its group stops.
            try? await gracefulShutdown()
            return
        }
        await cancelWhenGracefulShutdown { await log.run() }
    }
}

/// A cluster node's log as a service: the replica's writer, the tail of the cluster's log and the cluster writer; on
/// graceful shutdown they stop and what is still queued is refused.
struct ClusterLogService: Service {
    let log: ClusterEventLog

    func run() async {
        await cancelWhenGracefulShutdown { await log.run() }
    }
}

/// Brings the decision state to this Chorus's format once the writer runs (``ChorusDomain/DecisionStateUpgrade``),
/// then stays until the group stops.
struct DecisionStateUpgradeService: Service {
    let log: LMDBEventLog
    let commands: CommandExecutor
    let logger: Logger

    func run() async {
        if !log.isReadOnly {
            do {
                let format = try DecisionStateUpgrade(log: log, keys: commands.keys).storedFormat()
                if format < DecisionStateUpgrade.currentFormat {
                    logger.notice(
                        "recomputing the decision state from the log in this Chorus's format; writes wait for it",
                        metadata: ["format": "\(format)", "events": "\(log.head)"])
                    let started = ContinuousClock.now
                    try await commands.upgradeDecisionState()
                    logger.notice("decision state recomputed", metadata: ["took": "\(ContinuousClock.now - started)"])
                }
            } catch {
                // The first write tries again.
                logger.error("the decision state could not be recomputed", metadata: ["error": "\(error)"])
            }
        }
        try? await gracefulShutdown()
    }
}
