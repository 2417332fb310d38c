import ChorusDomain
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
    /// Each user's data key (``DataKeyStore``).
    public let keys: DataKeyStore
    /// How long after an account deletion every file is rid of the account's personal data, at most.
    public let erasureDelay: Duration
    public let tokens: SessionTokens
    package let metrics = ChorusMetrics()
    /// Writes are refused while the read models are further behind the log than this many events (see ``execute``).
    public let maximumWriteLag: UInt64
    package let responses: StoredResponses
    let activity: SessionActivity
    /// The embedded log behind ``log``, whose writer and files the backend runs and closes.
    private let embeddedLog: LMDBEventLog

    var embeddedLogIsReadOnly: Bool { embeddedLog.isReadOnly }
    private let logger: Logger

    /// The engine answering now (see ``readModels``).
    public var projections: ProjectionEngine { readModels.current }

    /// Opens (creating if needed) the backend in `data`. With `readOnly`, the log is only read (a past state made by
    /// `chorus replay --into`, or a copy): nothing can be appended. Past `maximumLogSize` bytes every append fails.
    /// The log is written and the read models follow it while ``services`` run (the server's service group runs
    /// them). `maximumWriteLag`: 10,000 events is a fraction of a second of the read models' work, and far beyond
    /// what they lag under load (a few hundred events at most under `chorus bench soak`).
    public init(
        data: DataDirectory, readOnly: Bool = false, maximumLogSize: Int? = nil, maximumWriteLag: UInt64 = 10_000,
        erasureDelay: Duration = .seconds(600), passwordHasher: PasswordHasher = PasswordHasher(), logger: Logger
    ) throws {
        self.data = data
        self.maximumWriteLag = maximumWriteLag
        self.erasureDelay = erasureDelay
        let metrics = self.metrics
        let log = try data.openLog(
            readOnly: readOnly, maximumSize: maximumLogSize, commitObserver: { metrics.recordCommit($0) })
        do {
            let keys = try data.openKeys()
            self.keys = keys
            let media = try MediaStore(directory: data.media, keys: keys)
            self.media = media
            commands = CommandExecutor(log: log, keys: keys, media: media, passwordHasher: passwordHasher)
            tokens = SessionTokens(secret: try data.sessionSecretBytes())
            readModels = try ServedReadModels(log: log, keys: keys, dataDirectory: data.root, logger: logger)
            responses = try StoredResponses(directory: data.responses)
            activity = SessionActivity(path: data.sessionActivity)
        } catch {
            log.close()
            throw error
        }
        self.log = log
        embeddedLog = log
        self.logger = logger
    }

    /// What keeps the backend running, for a service group: the log's writer, the read models following the log, and
    /// the erasures of deleted accounts, which `holders` (what the server keeps beside the backend) take part in. In
    /// reverse order on shutdown: the read models stop, then the writer commits what it holds.
    public func services(holdingPersonalData holders: [any PersonalDataHolder] = []) -> [any Service] {
        [
            logWriterService, projectionService, stateUpgradeService,
            ErasureService(backend: self, holders: holders, logger: logger),
        ]
    }

    /// Recomputes a decision state an older Chorus wrote, at start rather than in the first write's request.
    var stateUpgradeService: any Service {
        DecisionStateUpgradeService(log: embeddedLog, commands: commands, logger: logger)
    }

    /// The log's writer: until it runs, appends wait.
    public var logWriterService: any Service { LogWriterService(log: embeddedLog) }

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
        return try await commands.execute(command, idempotencyKey: idempotencyKey)
    }

    /// The user a bearer token speaks for: its MAC is ours and its session has neither ended nor expired. The session
    /// counts as seen now.
    public func user(forToken token: String) throws -> (user: UserID, session: SessionID)? {
        guard let session = tokens.session(fromToken: token), let user = try commands.user(ofSession: session) else {
            return nil
        }
        activity.record(session)
        return (user, session)
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
        keys.close()
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
