import ChorusDomain
import ChorusLog
import ChorusProjections
import Logging

/// Everything behind the API, opened from one data directory: the log and its decisions, the read models, the media,
/// the session secret, and the first responses to idempotent requests.
public final class ChorusBackend: Sendable {
    public let data: DataDirectory
    public let log: EventLog
    public let commands: CommandExecutor
    /// The read models being served; an online rebuild replaces them.
    public let readModels: ServedReadModels
    public let media: MediaStore
    public let tokens: SessionTokens
    public let metrics = ChorusMetrics()
    /// Writes are refused while the read models are further behind the log than this many events (see ``execute``).
    public let maximumWriteLag: UInt64
    let responses: StoredResponses
    private let unsynced: UnsyncedReadModels

    /// The engine answering now (see ``readModels``).
    public var projections: ProjectionEngine { readModels.current }

    /// Opens (creating if needed) the backend in `data`. With `readOnly`, the log is only read (a past state made by
    /// `chorus replay --into`, or a copy): nothing can be appended. Past `maximumLogSize` bytes every append fails.
    /// The read models follow the log once `readModels.startFollowing()` is called (the server's service group does).
    /// `maximumWriteLag`: 10,000 events is a fraction of a second of the read models' work, and far beyond what they
    /// lag under load (a few hundred events at most under `chorus bench soak`).
    public init(
        data: DataDirectory, readOnly: Bool = false, maximumLogSize: Int? = nil, maximumWriteLag: UInt64 = 10_000,
        passwordHasher: PasswordHasher = PasswordHasher(), logger: Logger
    ) throws {
        self.data = data
        self.maximumWriteLag = maximumWriteLag
        let metrics = self.metrics
        let log = try data.openLog(
            readOnly: readOnly, maximumSize: maximumLogSize, commitObserver: { metrics.recordCommit($0) })
        do {
            let media = try MediaStore(directory: data.media)
            self.media = media
            commands = CommandExecutor(log: log, media: media, passwordHasher: passwordHasher)
            tokens = SessionTokens(secret: try data.sessionSecretBytes())
            try ProjectionGenerations(dataDirectory: data.root).prepareCurrent()
            unsynced = UnsyncedReadModels(data: data)
            try unsynced.prepare(log: log, data: data, logger: logger)
            readModels = try ServedReadModels(log: log, data: data, logger: logger)
            responses = try StoredResponses(directory: data.responses)
        } catch {
            log.close()
            throw error
        }
        self.log = log
    }

    /// Executes `command`, unless the read models cannot apply the log (a full disk) or are far behind it (an
    /// overload, or a start after the log grew without them): every write's answer waits for them, at most 5 s, so
    /// the command would be appended and still answered 503. Refused, it appends nothing.
    public func execute(_ command: Command, idempotencyKey: String?) async throws -> CommandResult {
        let engine = readModels.current
        guard engine.applyFailure == nil else {
            throw APIError.unavailable("the server cannot take writes now: its read models cannot apply the log; retry later")
        }
        let lag = engine.lag
        guard lag <= maximumWriteLag else {
            throw APIError.unavailable(
                "the server cannot take writes now: its read models are \(lag) events behind the log; retry shortly")
        }
        return try await commands.execute(command, idempotencyKey: idempotencyKey)
    }

    /// The user a bearer token speaks for: its MAC is ours and its session has neither ended nor expired.
    public func user(forToken token: String) throws -> (user: UserID, session: SessionID)? {
        guard let session = tokens.session(fromToken: token), let user = try commands.user(ofSession: session) else {
            return nil
        }
        return (user, session)
    }

    /// Syncs and closes the read models, then closes the stored responses and the log (after its writer has
    /// committed what it holds).
    public func close() {
        do {
            try readModels.close()
            unsynced.markSynced()
        } catch {
            // The marker stays: the next start after a machine crash rebuilds.
        }
        responses.close()
        log.close()
    }
}
