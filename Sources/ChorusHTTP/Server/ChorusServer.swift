import ChorusBackend
import ChorusDelivery
import ChorusDomain
import ChorusLog
import ChorusProjections
import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import ServiceLifecycle

/// How `chorus serve` runs: flags, then environment, then these defaults.
public struct ServerConfiguration: Sendable {
    public var host = "127.0.0.1"
    public var port = 8080
    /// Opens the admin routes; without it nothing does.
    public var adminToken: String?
    /// Serves the admin console under `/admin` (with an admin token to sign in with); off, every `/admin` path is 404.
    public var adminConsole = true
    /// Where clients reach the server, for media URLs; `http://host:port` when not set.
    public var publicBaseURL: String?
    /// A connection with no request under way for this long is closed.
    public var idleTimeout: Duration = .seconds(60)
    /// A request whose body has not all arrived this long after its head closes its connection; room for 10 MiB of
    /// media over a slow mobile link.
    public var requestTimeout: Duration = .seconds(120)
    /// How often sign-ins, resets and writes may be done (``RateLimits``); ``RateLimits/none`` for load tests.
    public var rateLimits = RateLimits()
    /// The most live streams one user holds open at once (opening one more closes their oldest); nil for no bound.
    public var liveStreamsPerUser: Int? = 20
    /// The reverse proxies whose `X-Forwarded-For` says who a request comes from (``ClientAddressMiddleware``).
    public var trustedProxies: [IPAddressRange] = []
    /// Serves the data directory's log as it is, refusing every write with 403 (`chorus serve --read-only`).
    public var readOnly = false
    /// Logs every answered request at `debug` level (``AccessLogMiddleware``).
    public var logsRequests = false
    /// How long a read waits for `Chorus-Min-Position` (openapi.yaml: 5 s).
    public var consistencyTimeout: Duration = .seconds(5)
    /// How often an idle live stream gets a comment line (openapi.yaml: 15 s).
    public var heartbeat: Duration = .seconds(15)
    /// The most events kept for one live stream that has not taken them yet (a client reading slowly): past it, the
    /// stream reads them itself, from the newest decoded events or the log (``ChorusProjections/LiveHub``).
    public var liveBacklog = 4_096
    /// Where signed webhooks go; nil sends none (and keeps no outbox).
    public var webhooks: WebhookConfiguration?
    /// Where pushes to phones go (APNs, FCM); nil sends none (and keeps no outbox).
    package var push: PushConfiguration?
    /// Bytes of rendered pages of posts kept to answer again while nothing they show changes; 0 keeps none.
    public var keptPageBytes = 64 << 20

    public init() {}

    var baseURL: String { publicBaseURL ?? "http://\(host):\(port)" }
}

/// The HTTP API of openapi.yaml over a ``ChorusBackend``, as a Hummingbird application whose service group also runs
/// the backend's services (the log writer, the read models following the log): on SIGTERM the server stops taking
/// connections and drains its requests, then the read models stop, then the log writer commits what it holds; the
/// caller closes the backend after `runService` returns.
public enum ChorusServer {
    /// The Hummingbird application of the API.
    public typealias HTTPApplication = Application<RouterResponder<ChorusRequestContext>>

    /// The application over `backend`; ``ChorusApplication/run(_:logger:_:)`` opens the backend and builds it.
    public static func makeApplication(
        backend: ChorusBackend, configuration: ServerConfiguration, logger: Logger
    ) throws -> HTTPApplication {
        let webhooks = try Webhooks(backend: backend, configuration: configuration, logger: logger)
        let pushes = try Pushes(backend: backend, configuration: configuration, logger: logger)
        // Erasures reach the outboxes, also those left from when webhooks or pushes were configured.
        let outboxes: [any PersonalDataHolder] = [
            try webhooks?.outbox ?? Webhooks.dormantOutbox(backend: backend, configuration: configuration),
            try pushes?.outbox ?? Pushes.dormantOutbox(backend: backend, configuration: configuration),
        ].compactMap { $0 }
        return Application(
            router: makeRouter(
                backend: backend, configuration: configuration,
                deliveries: Deliveries(
                    webhooks: webhooks?.outbox, pushes: pushes?.outbox, push: configuration.push,
                    pushTurn: pushes?.service.turn)),
            server: serverBuilder(configuration),
            configuration: .init(
                address: .hostname(configuration.host, port: configuration.port), serverName: "Chorus"),
            // A service group stops its services in reverse order: the HTTP server (which Hummingbird adds last)
            // drains its requests first, then pushes and webhooks stop, then the backend's services, last to first.
            services: backend.services(holdingPersonalData: outboxes) + (webhooks.map { [$0.service] } ?? [])
                + (pushes.map { [$0.service] } ?? []),
            logger: logger)
    }

    /// HTTP/1.1 with each connection's tasks on its event loop, and the idle and request timeouts.
    public static func serverBuilder(_ configuration: ServerConfiguration) -> HTTPServerBuilder {
        EventLoopBoundHTTP1.builder(
            idleTimeout: configuration.idleTimeout, requestTimeout: configuration.requestTimeout)
    }

    /// The routes alone, for an application of one's own: webhooks and pushes are sent only by ``makeApplication``'s.
    public static func makeRouter(backend: ChorusBackend, configuration: ServerConfiguration) -> Router<
        ChorusRequestContext
    > {
        makeRouter(backend: backend, configuration: configuration, deliveries: Deliveries())
    }

    static func makeRouter(backend: ChorusBackend, configuration: ServerConfiguration, deliveries: Deliveries)
        -> Router<ChorusRequestContext>
    {
        let endpoints = Endpoints(
            backend: backend, renderer: ObjectRenderer(publicBaseURL: configuration.baseURL, mediaStore: backend.media),
            consistencyTimeout: configuration.consistencyTimeout,
            pages: configuration.keptPageBytes > 0 ? RenderedPages(budget: configuration.keptPageBytes) : nil,
            limiters: Limiters(configuration.rateLimits))
        let router = Router(context: ChorusRequestContext.self)
        // Middleware applies to the routes added after it, and to "no such route"; the first added is outermost.
        router.add(middleware: MetricsMiddleware(metrics: backend.metrics))
        router.add(middleware: NoSniffMiddleware())
        if !configuration.trustedProxies.isEmpty {
            router.add(middleware: ClientAddressMiddleware(trustedProxies: configuration.trustedProxies))
        }
        if configuration.logsRequests { router.add(middleware: AccessLogMiddleware()) }
        router.add(middleware: ErrorMiddleware())
        // Before the read-only middleware: signing in and out of the console writes nothing to the log, and the
        // console refuses its own actions on a read-only server with a page.
        if configuration.adminConsole, let adminToken = configuration.adminToken {
            ConsoleRoutes(
                endpoints: endpoints, adminToken: adminToken, deliveries: deliveries, sessions: ConsoleSessions(),
                secureCookies: configuration.baseURL.hasPrefix("https://"), readOnly: configuration.readOnly
            ).add(to: router)
        }
        if configuration.readOnly { router.add(middleware: ReadOnlyMiddleware()) }

        OperationsRoutes(endpoints: endpoints, adminToken: configuration.adminToken, deliveries: deliveries).add(
            to: router)
        AuthRoutes(endpoints: endpoints).addOpen(to: router)
        MediaRoutes(endpoints: endpoints).addOpen(to: router)

        let signedIn = router.group("v1").add(middleware: AuthMiddleware(backend: backend))
        // Ending a session is never held back by the limits on writes: whoever fears for their account can always.
        AuthRoutes(endpoints: endpoints).addProtected(to: signedIn)
        AccountRoutes(endpoints: endpoints).addSessions(to: signedIn)
        DeviceRoutes(endpoints: endpoints).add(to: signedIn)
        // Routes added from here on have the middleware; those above do not.
        signedIn.add(middleware: WriteLimitMiddleware(writesPerUser: endpoints.limiters.writesPerUser))
        UserRoutes(endpoints: endpoints).add(to: signedIn)
        AccountRoutes(endpoints: endpoints).add(to: signedIn)
        ReportRoutes(endpoints: endpoints).add(to: signedIn)
        PostRoutes(endpoints: endpoints).add(to: signedIn)
        BookmarkRoutes(endpoints: endpoints).add(to: signedIn)
        MutedWordRoutes(endpoints: endpoints).add(to: signedIn)
        FollowRequestRoutes(endpoints: endpoints).add(to: signedIn)
        HashtagRoutes(endpoints: endpoints).add(to: signedIn)
        FeedRoutes(endpoints: endpoints).add(to: signedIn)
        MessageRoutes(endpoints: endpoints).add(to: signedIn)
        RoomRoutes(endpoints: endpoints).add(to: signedIn)
        MediaRoutes(endpoints: endpoints).addProtected(to: signedIn)
        let hub = LiveHub(
            readModels: backend.readModels, window: backend.liveEvents, maximumPending: configuration.liveBacklog)
        LiveRoutes(
            endpoints: endpoints, heartbeat: configuration.heartbeat, hub: hub,
            slots: LiveStreamSlots(limit: configuration.liveStreamsPerUser, hub: hub)
        ).add(to: signedIn)
        return router
    }
}
