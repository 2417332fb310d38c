import ArgumentParser
import ChorusBackend
import ChorusCluster
import ChorusDomain
import ChorusHTTP
import ChorusLog
import ChorusProjections
import Foundation
import Logging

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the HTTP API of a data directory (created if missing).",
        discussion: """
            Each setting comes from its flag, else its environment variable, else its default. The admin token comes \
            from CHORUS_ADMIN_TOKEN only (a flag would show in the process list); without it no admin route opens. \
            SIGTERM or SIGINT stop taking connections, finish the requests and commits in flight, then exit.

            Webhooks: with CHORUS_WEBHOOK_URL (an http or https URL) and CHORUS_WEBHOOK_SECRET (whsec_ and the \
            base64 of at least 16 bytes), every notification, message to a user, and password reset is POSTed \
            there as a Standard Webhooks request (webhook-id, webhook-timestamp, webhook-signature), from a durable \
            outbox in the data directory: at least once, in log order per recipient, retried with exponential \
            backoff (CHORUS_WEBHOOK_RETRY_DELAY_MS, default 1000, doubling up to CHORUS_WEBHOOK_MAX_RETRY_DELAY_MS, \
            default an hour) for 24 hours, across \
            restarts. CHORUS_WEBHOOK_TIMEOUT_MS (default 10000) bounds each attempt. The outbox starts with what \
            happens after webhooks are first configured. GET /v1/admin/webhooks shows how delivery goes.

            Cluster: with --cluster (or CHORUS_CLUSTER_URL) the server is one node of a cluster whose log is kept \
            in PostgreSQL; the data directory holds the node's replica of it and its own read models. The first \
            node makes the schema; `chorus cluster init --from DIR` moves a single node's log in first.
            """
    )

    @OptionGroup var data: DataDirectoryOption

    @Option(help: "The address to listen on (CHORUS_HOST; default 127.0.0.1).")
    var host: String?

    @Option(help: "The port to listen on (CHORUS_PORT; default 8080).")
    var port: Int?

    @Option(help: "Where clients reach the server, for media URLs (CHORUS_PUBLIC_URL; default http://HOST:PORT).")
    var publicURL: String?

    @Option(help: "When the log is empty, first fill it with a demo workload of about this many events.")
    var demoEvents: Int?

    @Flag(
        help: "Serve the log as it is and refuse every write with 403: for a past state made by `chorus replay --into`."
    )
    var readOnly = false

    @Flag(help: "No rate limits at all (CHORUS_RATE_LIMITS=off): for load tests, never in production.")
    var noRateLimits = false

    @Option(help: ArgumentHelp(Self.rateLimitHelp, valueName: "name=burst,every"))
    var rateLimit: [String] = []

    @Option(
        help:
            "The most live streams one user may hold open at once, or off (CHORUS_LIVE_STREAMS_PER_USER; default 20)."
    )
    var liveStreamsPerUser: String?

    @Option(
        help: ArgumentHelp(
            "The reverse proxies in front of the server, as addresses or CIDR ranges separated by commas, such as 10.0.0.0/8 (CHORUS_TRUSTED_PROXIES; default none).",
            discussion: """
                A request from one of them is taken to come from the address its X-Forwarded-For names (the \
                rightmost one that is not a trusted proxy's), for the limits kept per address. Without this, every \
                request through a proxy counts as the proxy's own.
                """))
    var trustedProxies: String?

    @Option(
        help: ArgumentHelp(
            "The most disk the log may take, such as 800M or 50G (CHORUS_MAX_LOG_SIZE; default 1T).",
            discussion: "Past it every write answers 503 unavailable, and the server logs MDB_MAP_FULL; reads go on."))
    var maxLogSize: ByteCount?

    @Option(
        help: ArgumentHelp(
            "The least severe log lines written: trace, debug, info, notice, warning, error or critical (CHORUS_LOG_LEVEL; default info).",
            discussion: "At debug or below, every answered request is logged too: method, path, status, milliseconds."))
    var logLevel: String?

    @Option(
        help: ArgumentHelp(
            "How long after an account deletion, at most, until no file holds its personal data, such as 10m or 30s (CHORUS_ERASURE_DELAY; default 10m).",
            discussion: """
                The account's data key is destroyed at once; within the delay its media and stored responses are \
                removed, and the read models, stored responses and key store are compacted and swapped in. \
                Deletions within one delay share one compaction.
                """))
    var erasureDelay: String?

    @Option(
        help: ArgumentHelp(
            "Join a cluster: its PostgreSQL, as postgresql://user[:password]@host:port/database (CHORUS_CLUSTER_URL).",
            discussion: "The data directory then holds this node's replica of the cluster's log and its read models."))
    var cluster: String?

    @Option(
        help:
            "In a cluster, how long a write waits for the cluster's log (a lock held by another session) before it answers 503, such as 5s (CHORUS_CLUSTER_WRITE_TIMEOUT; default 5s)."
    )
    var clusterWriteTimeout: String?

    @Option(
        help: ArgumentHelp(
            "The followers from which on an author's new posts are merged into the Following feeds when read instead of written into each (CHORUS_FAN_OUT_LIMIT; default \(ProjectionEngine.defaultFanOutLimit)).",
            discussion: """
                Below it a post is written into every follower's feed; from it on, one post would hold the read models \
                up for as long as writing that many entries takes. The feeds read the same either way, so it can change \
                between runs without a rebuild.
                """))
    var fanOutLimit: Int?

    @Option(
        help: ArgumentHelp(
            "Memory for pages of posts kept as rendered, such as 64M, or off (CHORUS_KEPT_PAGES; default 64M).",
            discussion: """
                A feed or posts tab page is answered again from memory, at the newest position, for as long as \
                nothing it shows has changed; the oldest kept go first once the memory is full.
                """))
    var keptPages: String?

    mutating func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        var settings = ServerConfiguration()
        settings.host = host ?? environment["CHORUS_HOST"] ?? settings.host
        if let port = try port ?? environment["CHORUS_PORT"].map(Self.port) { settings.port = port }
        settings.publicBaseURL = publicURL ?? environment["CHORUS_PUBLIC_URL"]
        settings.adminToken = environment["CHORUS_ADMIN_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
        guard (1...65_535).contains(settings.port) else { throw ValidationError("--port must be from 1 to 65535") }
        let data = self.data.directory

        let levelName = logLevel ?? environment["CHORUS_LOG_LEVEL"] ?? "info"
        guard let level = Logger.Level(rawValue: levelName.lowercased()) else {
            let names = Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")
            throw ValidationError("--log-level (or CHORUS_LOG_LEVEL) must be one of \(names), not \(levelName)")
        }
        settings.logsRequests = level <= .debug
        LoggingSystem.bootstrap { label in
            var handler = DeferredMetadataLogHandler(StreamLogHandler.standardError(label: label))
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "chorus.serve")
        settings.readOnly = readOnly
        try applyLimits(to: &settings, environment: environment)
        if readOnly, demoEvents != nil { throw ValidationError("--demo-events writes; it cannot go with --read-only") }
        if let demoEvents {
            guard demoEvents > 0 else { throw ValidationError("--demo-events must be positive") }
            try await fillWithDemo(data, events: demoEvents, logger: logger)
        }
        if readOnly, !FileManager.default.fileExists(atPath: data.log + "/data.mdb") {
            throw ValidationError("--read-only serves an existing log, and \(data.log) holds none")
        }
        let maximumLogSize =
            try maxLogSize
            ?? environment["CHORUS_MAX_LOG_SIZE"].map { text in
                guard let size = ByteCount(argument: text) else {
                    throw ValidationError("CHORUS_MAX_LOG_SIZE: \(ByteCount.help)")
                }
                return size
            }
        if let maximumLogSize, maximumLogSize.bytes < ByteCount.minimumLogSize {
            throw ValidationError("--max-log-size must be at least 1M")
        }
        let erasureDelayText = erasureDelay ?? environment["CHORUS_ERASURE_DELAY"] ?? "10m"
        guard let erasureDelay = Self.duration(erasureDelayText), erasureDelay > .zero else {
            throw ValidationError(
                "--erasure-delay (or CHORUS_ERASURE_DELAY) must be a positive duration such as 500ms, 30s, 10m or 1h, "
                    + "not \(erasureDelayText)")
        }
        let fanOutLimit =
            try fanOutLimit
            ?? environment["CHORUS_FAN_OUT_LIMIT"].map { text in
                guard let limit = Int(text) else {
                    throw ValidationError("CHORUS_FAN_OUT_LIMIT must be a whole number")
                }
                return limit
            }
        if let fanOutLimit, fanOutLimit < 1 { throw ValidationError("--fan-out-limit must be at least 1") }
        if let text = keptPages ?? environment["CHORUS_KEPT_PAGES"] {
            guard let bytes = text == "off" ? 0 : ByteCount(argument: text)?.bytes else {
                throw ValidationError(
                    "--kept-pages (or CHORUS_KEPT_PAGES) must be off or \(ByteCount.help), not \(text)")
            }
            settings.keptPageBytes = bytes
        }
        let clusterDatabase = try clusterDatabase(environment, logger: logger)
        if clusterDatabase != nil, readOnly || demoEvents != nil {
            throw ValidationError(
                "--cluster cannot go with --read-only or --demo-events (fill a cluster with `chorus cluster init`)")
        }
        // The pool runs until the server has stopped and closed the backend.
        let pool = clusterDatabase.map { database in Task { await database.run() } }
        defer { pool?.cancel() }
        if let clusterDatabase {
            do {
                try await ChorusBackend.joinCluster(clusterDatabase, data: data)
            } catch {
                throw OperatorError(
                    "could not join the cluster at \(clusterDatabase.address): \(ClusterError.summary(error))")
            }
        }
        let backend = try ChorusBackend(
            data: data, readOnly: readOnly, maximumLogSize: maximumLogSize?.bytes,
            fanOutLimit: fanOutLimit ?? ProjectionEngine.defaultFanOutLimit, erasureDelay: erasureDelay,
            cluster: clusterDatabase, logger: logger)
        defer { backend.close() }
        logger.info(
            "serving",
            metadata: [
                "data": "\(data.root)", "address": "\(settings.host):\(settings.port)",
                "position": "\(backend.log.head)",
                "mode":
                    "\(readOnly ? "read-only" : clusterDatabase.map { "cluster node of \($0.address)" } ?? "read-write")",
            ])
        settings.webhooks = try Self.webhooks(environment)
        let application = try ChorusServer.makeApplication(
            backend: backend, configuration: settings, logger: logger)
        try await application.runService()
        logger.info("stopped")
    }

    private func fillWithDemo(_ data: DataDirectory, events: Int, logger: Logger) async throws {
        let log = try data.openLog()
        defer { log.close() }
        guard log.head == .start else {
            logger.info("the log already holds events; no demo data added", metadata: ["head": "\(log.head)"])
            return
        }
        let summary = try await DemoCommand.writeDemo(into: data, log: log, events: events, seed: 1)
        logger.info(
            "demo data written; every demo user's password is 'password'",
            metadata: ["events": "\(summary.events)", "users": "\(summary.users)", "e-mail": "user0@demo.chorus"])
    }

    /// The cluster to join, from --cluster or CHORUS_CLUSTER_URL; nil for a single node.
    private func clusterDatabase(_ environment: [String: String], logger: Logger) throws -> ClusterDatabase? {
        guard let url = cluster ?? environment["CHORUS_CLUSTER_URL"].flatMap({ $0.isEmpty ? nil : $0 }) else {
            return nil
        }
        let address: ClusterAddress
        do { address = try ClusterAddress(url) } catch let error as ClusterError {
            throw ValidationError("--cluster (or CHORUS_CLUSTER_URL): \(error.description)")
        }
        let timeoutText = clusterWriteTimeout ?? environment["CHORUS_CLUSTER_WRITE_TIMEOUT"] ?? "5s"
        guard let timeout = Self.duration(timeoutText), timeout >= .milliseconds(1) else {
            throw ValidationError(
                "--cluster-write-timeout (or CHORUS_CLUSTER_WRITE_TIMEOUT) must be a duration such as 500ms or 5s, "
                    + "not \(timeoutText)")
        }
        return ClusterDatabase(address: address, lockTimeout: timeout, logger: logger)
    }

    /// The webhook settings of the environment; nil without `CHORUS_WEBHOOK_URL`.
    private static func webhooks(_ environment: [String: String]) throws -> WebhookConfiguration? {
        guard let url = environment["CHORUS_WEBHOOK_URL"], !url.isEmpty else { return nil }
        guard let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme?.lowercased() ?? ""),
            parsed.host != nil
        else { throw ValidationError("CHORUS_WEBHOOK_URL must be an http or https URL, not \(url)") }
        guard let secret = environment["CHORUS_WEBHOOK_SECRET"], let signer = WebhookSigner(secret: secret) else {
            throw ValidationError(
                "CHORUS_WEBHOOK_URL needs CHORUS_WEBHOOK_SECRET: whsec_ and the base64 of at least 16 random bytes")
        }
        var configuration = WebhookConfiguration(url: url, signer: signer)
        func milliseconds(_ name: String) throws -> Duration? {
            guard let text = environment[name] else { return nil }
            guard let value = Int64(text), value > 0 else {
                throw ValidationError("\(name) must be a positive number of milliseconds, not \(text)")
            }
            return .milliseconds(value)
        }
        if let delay = try milliseconds("CHORUS_WEBHOOK_RETRY_DELAY_MS") { configuration.retryDelay = delay }
        if let delay = try milliseconds("CHORUS_WEBHOOK_MAX_RETRY_DELAY_MS") { configuration.maximumRetryDelay = delay }
        if let timeout = try milliseconds("CHORUS_WEBHOOK_TIMEOUT_MS") { configuration.timeout = timeout }
        return configuration
    }

    /// `500ms`, `30s`, `10m` or `1h`.
    static func duration(_ text: String) -> Duration? {
        let units: [(String, Int64)] = [("ms", 1), ("s", 1_000), ("m", 60_000), ("h", 3_600_000)]
        for (suffix, milliseconds) in units where text.hasSuffix(suffix) {
            guard let value = Int64(text.dropLast(suffix.count)), value >= 0, value <= Int64.max / milliseconds else {
                return nil
            }
            return .milliseconds(value * milliseconds)
        }
        return nil
    }

    private static func port(_ text: String) throws -> Int {
        guard let port = Int(text) else { throw ValidationError("CHORUS_PORT must be a number, not \(text)") }
        return port
    }
}
