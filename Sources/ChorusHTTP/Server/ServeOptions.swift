import ChorusBackend
import ChorusCluster
import ChorusDomain
import ChorusProjections
import Logging

/// Everything that says how a server runs: what `chorus serve` makes of its flags and environment, and what tests set
/// by hand. ``ChorusApplication/run(_:logger:_:)`` builds the same server from it either way. The defaults are serve's.
public struct ServeOptions: Sendable {
    /// The data directory: the log, the decision state, the read models, media and keys.
    public var data = DataDirectory("./chorus-data")
    /// The HTTP side: the address, the admin token, limits, timeouts, webhooks, read-only.
    public var server = ServerConfiguration()
    /// The most disk the log may take, in bytes; nil for the log's own default.
    public var maximumLogSize: Int?
    /// Followers from which on an author's posts are merged into feeds when read (``ChorusBackend``).
    public var fanOutLimit = ProjectionEngine.defaultFanOutLimit
    /// How long after an account's deletion, at most, until no file holds its personal data.
    public var erasureDelay: Duration = .seconds(600)
    /// How long an uploaded image may go unshown by any post or profile before it is removed: a day, as the contract
    /// says; tests shorten it.
    public var unattachedMediaLifetime: Duration = .seconds(24 * 3600)
    /// The cluster whose log this node shares; nil for a single node.
    public var cluster: Cluster?
    /// bcrypt's cost: tests lower it.
    public var passwordHasher = PasswordHasher()
    /// The least severe lines logged.
    public var logLevel: Logger.Level = .info
    /// When the log is empty, fill it first with a demo workload of about this many events.
    public var demoEvents: Int?

    /// A cluster's PostgreSQL, and how long a write waits for its log's lock before answering 503.
    public struct Cluster: Sendable {
        public var address: ClusterAddress
        public var writeTimeout: Duration

        public init(address: ClusterAddress, writeTimeout: Duration = .seconds(5)) {
            self.address = address
            self.writeTimeout = writeTimeout
        }
    }

    public init() {}
}

/// A cluster the server could not join, said as an operator reads it.
public struct ClusterJoinError: Error, CustomStringConvertible {
    public let description: String
}

/// The server `chorus serve` runs, built in one place for it and for the tests.
public enum ChorusApplication {
    /// Opens the data directory of `options` (having joined its cluster, if any), builds the HTTP application over
    /// it, and gives both to `body`; closes the data directory when `body` returns or throws.
    public static func run<Result>(
        _ options: ServeOptions, logger: Logger,
        _ body: (ChorusServer.HTTPApplication, ChorusBackend) async throws -> Result
    ) async throws -> Result {
        let database = options.cluster.map {
            ClusterDatabase(address: $0.address, lockTimeout: $0.writeTimeout, logger: logger)
        }
        // The pool runs until the server has stopped and closed the backend.
        let pool = database.map { database in Task { await database.run() } }
        defer { pool?.cancel() }
        if let database {
            do {
                try await ChorusBackend.joinCluster(database, data: options.data)
            } catch {
                throw ClusterJoinError(
                    description: "could not join the cluster at \(database.address): \(ClusterError.summary(error))")
            }
        }
        let backend = try ChorusBackend(
            data: options.data, readOnly: options.server.readOnly, maximumLogSize: options.maximumLogSize,
            fanOutLimit: options.fanOutLimit, erasureDelay: options.erasureDelay,
            unattachedMediaLifetime: options.unattachedMediaLifetime, passwordHasher: options.passwordHasher,
            cluster: database, logger: logger)
        defer { backend.close() }
        let application = try ChorusServer.makeApplication(
            backend: backend, configuration: options.server, logger: logger)
        return try await body(application, backend)
    }
}
