import ArgumentParser
import ChorusBackend
import ChorusHTTP
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

            Push: with CHORUS_APNS_KEY_FILE (the .p8 key), CHORUS_APNS_KEY_ID, CHORUS_APNS_TEAM_ID and \
            CHORUS_APNS_TOPIC (the app's bundle id), every notification and message is pushed to the recipient's \
            iPhones through APNs; with CHORUS_FCM_SERVICE_ACCOUNT_FILE, to their Android phones through FCM. \
            CHORUS_APNS_URL, CHORUS_APNS_SANDBOX_URL and CHORUS_FCM_URL change the endpoints, CHORUS_PUSH_CA_FILE adds \
            a trusted CA, CHORUS_PUSH_RETRY_DELAY_MS (default 1000) and CHORUS_PUSH_MAX_RETRY_DELAY_MS (default \
            600000) the backoff, CHORUS_PUSH_TIMEOUT_MS (default 10000) how long an answer may take. \
            GET /v1/admin/push shows how delivery goes.

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

    @Option(
        help: ArgumentHelp(
            "The admin console under /admin: on or off (CHORUS_ADMIN_CONSOLE; default on).",
            discussion: "It signs in with the admin token (CHORUS_ADMIN_TOKEN): without one, it is off.",
            valueName: "on|off"))
    var adminConsole: String?

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
        let options = try options(environment: ProcessInfo.processInfo.environment)
        LoggingSystem.bootstrap { label in
            var handler = DeferredMetadataLogHandler(StreamLogHandler.standardError(label: label))
            handler.logLevel = options.logLevel
            return handler
        }
        let logger = Logger(label: "chorus.serve")
        if let demoEvents = options.demoEvents {
            try await fillWithDemo(options.data, events: demoEvents, logger: logger)
        }
        if options.server.readOnly, !FileManager.default.fileExists(atPath: options.data.log + "/data.mdb") {
            throw ValidationError("--read-only serves an existing log, and \(options.data.log) holds none")
        }
        let mode =
            options.server.readOnly
            ? "read-only" : options.cluster.map { "cluster node of \($0.address)" } ?? "read-write"
        try await ChorusApplication.run(options, logger: logger) { application, backend in
            logger.info(
                "serving",
                metadata: [
                    "data": "\(options.data.root)", "address": "\(options.server.host):\(options.server.port)",
                    "position": "\(backend.log.head)", "mode": "\(mode)",
                ])
            try await application.runService()
        }
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
}
