import ChorusBackend
import Foundation
import HTTPTypes
import Hummingbird

/// The admin console under `/admin`: HTML pages rendered on the server from ``ConsoleTemplates``, over the same read
/// models and admin operations as the `/v1/admin` routes. Sign-in takes the admin token once and answers a session
/// cookie (``ConsoleSessions``); every form carries the session's CSRF token, and a form without it changes nothing.
struct ConsoleRoutes {
    let endpoints: Endpoints
    let adminToken: String
    let deliveries: Deliveries
    let sessions: ConsoleSessions
    /// Cookies are marked `Secure` when clients reach the server over https.
    let secureCookies: Bool
    /// How often an open Overview asks for itself again.
    static let overviewRefreshSeconds = 5

    func add(to router: Router<ChorusRequestContext>) {
        let console = router.group("admin").add(middleware: ConsoleHeadersMiddleware())
        router.get("admin") { _, _ in Self.redirect(to: "/admin/overview") }
        console.get("console.css") { _, _ in
            var headers = HTTPFields()
            headers[.contentType] = "text/css; charset=utf-8"
            return Response(
                status: .ok, headers: headers,
                body: .init(byteBuffer: ByteBuffer(string: ConsoleTemplates.styleSheet)))
        }
        console.get("sign-in") { request, _ in
            if sessions.session(request.cookies[ConsoleSessions.cookie]?.value) != nil {
                return Self.redirect(to: "/admin/overview")
            }
            return signInPage(error: nil, status: .ok)
        }
        console.post("sign-in") { request, context in
            try await signIn(request, context)
        }
        console.post("sign-out") { request, _ in
            if let id = request.cookies[ConsoleSessions.cookie]?.value, let session = sessions.session(id) {
                try await Self.requireCSRF(session.csrfToken, in: request)
                sessions.end(id)
            }
            var response = Self.redirect(to: "/admin/sign-in")
            response.setCookie(sessionCookie(value: "", maxAge: 0))
            return response
        }
        console.get("overview") { request, _ in
            guard let session = sessions.session(request.cookies[ConsoleSessions.cookie]?.value) else {
                return Self.redirect(to: "/admin/sign-in")
            }
            return try Self.html(render("overview", overview(csrf: session.csrfToken)))
        }
    }

    /// Checks the form's CSRF token against the sign-in cookie's, then the admin token, at most as often as the limit
    /// on console sign-ins allows from one address.
    private func signIn(_ request: Request, _ context: ChorusRequestContext) async throws -> Response {
        let form = try await Self.form(of: request)
        guard let expected = request.cookies[ConsoleSessions.signInCookie]?.value,
            AdminMiddleware.constantTimeEqual(form["csrf"] ?? "", expected)
        else {
            return signInPage(error: "The form had expired. Sign in again.", status: .forbidden)
        }
        if let limiter = endpoints.limiters.consoleSignInsPerAddress, let address = context.clientAddress,
            let wait = limiter.attempt(address)
        {
            let seconds = Limiters.retryAfterSeconds(wait)
            var response = signInPage(
                error: "Too many sign-ins from this address. Try again in \(seconds) s.", status: .tooManyRequests)
            response.headers[.retryAfter] = String(seconds)
            return response
        }
        guard AdminMiddleware.constantTimeEqual(form["token"] ?? "", adminToken) else {
            return signInPage(error: "That is not the admin token.", status: .unauthorized)
        }
        let (id, _) = sessions.start()
        var response = Self.redirect(to: "/admin/overview")
        response.setCookie(sessionCookie(value: id, maxAge: Int(ConsoleSessions.lifetime.components.seconds)))
        response.setCookie(signInCookie(value: "", maxAge: 0))
        return response
    }

    /// The sign-in form, with a fresh CSRF token in its hidden field and in a cookie of its own.
    private func signInPage(error: String?, status: HTTPResponse.Status) -> Response {
        let token = ConsoleSessions.randomToken()
        let page = ConsolePage(title: "Sign in", navigation: nil, error: error, csrf: token)
        var response =
            (try? Self.html(render("sign-in", page), status: status)) ?? Response(status: .internalServerError)
        response.setCookie(signInCookie(value: token, maxAge: 3600))
        return response
    }

    private func overview(csrf: String) throws -> OverviewPage {
        let backend = endpoints.backend
        let status = OperationsRoutes.status(of: backend)
        var outboxes: [OverviewPage.Outbox] = []
        if let webhooks = deliveries.webhooks {
            let webhookStatus = try webhooks.status()
            outboxes.append(
                OverviewPage.Outbox(
                    name: "Webhooks", sending: "yes", delivered: webhookStatus.delivered,
                    pending: webhookStatus.pending, failing: webhookStatus.failing,
                    lastError: webhookStatus.lastError ?? ""))
        }
        if let pushes = deliveries.pushes {
            let pushStatus = try pushes.status()
            outboxes.append(
                OverviewPage.Outbox(
                    name: "Push", sending: deliveries.pushTurn?.isSending == true ? "yes" : "no",
                    delivered: pushStatus.delivered, pending: pushStatus.pending, failing: pushStatus.failing,
                    lastError: pushStatus.lastError ?? ""))
        }
        return OverviewPage(
            navigation: ConsolePage.Navigation(current: "Overview", csrf: csrf), csrf: csrf,
            refreshSeconds: Self.overviewRefreshSeconds, position: backend.projections.position.rawValue,
            head: backend.log.head.rawValue,
            projections: status.projections.map {
                OverviewPage.ReadModel(
                    name: $0.name, position: $0.position, lag: $0.lag, state: $0.state,
                    eventsPerSecond: Int($0.eventsPerSecond))
            },
            deliveries: outboxes)
    }

    private func render(_ template: String, _ object: Any) throws -> String {
        guard let text = ConsoleTemplates.library.render(object, withTemplate: template) else {
            throw APIError(.internalServerError, "internal", "the console has no template \(template)")
        }
        return text
    }

    private func sessionCookie(value: String, maxAge: Int) -> Cookie {
        Cookie(
            name: ConsoleSessions.cookie, value: value, maxAge: maxAge, path: "/admin", secure: secureCookies,
            httpOnly: true, sameSite: .strict)
    }

    private func signInCookie(value: String, maxAge: Int) -> Cookie {
        Cookie(
            name: ConsoleSessions.signInCookie, value: value, maxAge: maxAge, path: "/admin/sign-in",
            secure: secureCookies, httpOnly: true, sameSite: .strict)
    }

    /// A form's fields; a body that is not a form, or over 16 KiB, has none.
    static func form(of request: Request) async throws -> [String: String] {
        let body = try await request.body.collect(upTo: 16 << 10)
        var fields: [String: String] = [:]
        for pair in String(buffer: body).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decoded(_ text: Substring) -> String {
                String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
            }
            fields[decoded(parts[0])] = parts.count > 1 ? decoded(parts[1]) : ""
        }
        return fields
    }

    /// Refuses a form whose CSRF token is not the session's: 403, and nothing changed.
    static func requireCSRF(_ expected: String, in request: Request) async throws {
        guard AdminMiddleware.constantTimeEqual(try await form(of: request)["csrf"] ?? "", expected) else {
            throw APIError(.forbidden, "csrf", "the form's CSRF token is missing or wrong; reload the page")
        }
    }

    static func redirect(to path: String) -> Response {
        var headers = HTTPFields()
        headers[.location] = path
        return Response(status: .seeOther, headers: headers)
    }

    static func html(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}

/// What every console page's layout shows.
struct ConsolePage {
    struct Navigation {
        struct Link {
            let name: String
            let path: String
            let current: Bool
        }

        let links: [Link]
        let csrf: String

        init(current: String, csrf: String) {
            links = [("Overview", "/admin/overview")].map { Link(name: $0.0, path: $0.1, current: $0.0 == current) }
            self.csrf = csrf
        }
    }

    let title: String
    let navigation: Navigation?
    let error: String?
    let csrf: String
}

/// The Overview page: where the log and the read models stand, and the outboxes' backlogs.
struct OverviewPage {
    struct ReadModel {
        let name: String
        let position: UInt64
        let lag: UInt64
        let state: String
        let eventsPerSecond: Int
    }

    struct Outbox {
        let name: String
        let sending: String
        let delivered: UInt64
        let pending: Int
        let failing: Int
        let lastError: String
    }

    // The layout's fields (``ConsolePage``): Mustache looks names up on the object rendered.
    let title = "Overview"
    let navigation: ConsolePage.Navigation
    let csrf: String
    let error: String? = nil
    let refreshSeconds: Int
    let position: UInt64
    let head: UInt64
    let projections: [ReadModel]
    let deliveries: [Outbox]
}

/// What every `/admin` answer carries: no framing, no script or style from anywhere but this server, nothing cached.
struct ConsoleHeadersMiddleware: RouterMiddleware {
    typealias Context = ChorusRequestContext

    static let frameOptions = HTTPField.Name("X-Frame-Options")!
    static let referrerPolicy = HTTPField.Name("Referrer-Policy")!
    static let contentSecurityPolicy =
        "default-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'; object-src 'none'"

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        var response = try await next(request, context)
        response.headers[.contentSecurityPolicy] = Self.contentSecurityPolicy
        response.headers[Self.frameOptions] = "DENY"
        response.headers[.cacheControl] = "no-store"
        response.headers[Self.referrerPolicy] = "no-referrer"
        return response
    }
}
