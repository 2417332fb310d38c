import ChorusBackend
import ChorusDomain
import Foundation
import HTTPTypes
import Hummingbird

/// The admin console under `/admin`: HTML pages rendered on the server from ``ConsoleTemplates``, over the same read
/// models and admin operations as the `/v1/admin` routes. Sign-in takes the admin token once and answers a session
/// cookie (``ConsoleSessions``); every form carries the session's CSRF token, and a form without it changes nothing.
/// Each page lives in a file of its own (`Console/Pages`), with its template and its routes.
struct ConsoleRoutes: Sendable {
    typealias Context = ChorusRequestContext

    let endpoints: Endpoints
    let adminToken: String
    let deliveries: Deliveries
    let sessions: ConsoleSessions
    /// Cookies are marked `Secure` when clients reach the server over https.
    let secureCookies: Bool
    /// A read-only server (`chorus serve --read-only`) shows its pages and refuses every action.
    let readOnly: Bool

    var backend: ChorusBackend { endpoints.backend }

    func add(to router: Router<Context>) {
        let console = router.group("admin").add(middleware: ConsoleHeadersMiddleware())
        console.get { _, _ in Self.redirect(to: "/admin/overview") }
        for (path, type, text) in [
            ("console.css", "text/css; charset=utf-8", ConsoleTemplates.styleSheet),
            ("favicon.svg", "image/svg+xml", ConsoleTemplates.icon),
        ] {
            console.get(RouterPath(path)) { _, _ in
                var headers = HTTPFields()
                headers[.contentType] = type
                return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
            }
        }
        console.get("sign-in") { request, _ in
            if sessions.session(request.cookies[ConsoleSessions.cookie]?.value) != nil {
                return Self.redirect(to: "/admin/overview")
            }
            return signInPage(error: nil, status: .ok)
        }
        console.post("sign-in") { request, context in try await signIn(request, context) }
        console.post("sign-out") { request, _ in
            let form = try await Self.form(of: request)
            if let id = request.cookies[ConsoleSessions.cookie]?.value, let session = sessions.session(id) {
                guard AdminMiddleware.constantTimeEqual(form["csrf"] ?? "", session.csrfToken) else {
                    return try screen(ConsoleRefusal.expiredForm.view, csrf: session.csrfToken)
                }
                sessions.end(id)
            }
            var response = Self.redirect(to: "/admin/sign-in")
            response.setCookie(sessionCookie(value: "", maxAge: 0))
            return response
        }
        addOverview(to: console)
        addLog(to: console)
        addProjections(to: console)
        addReports(to: console)
        addUsers(to: console)
        addErasures(to: console)
        addDeliveries(to: console)
    }

    // MARK: Pages and forms

    /// Adds `GET /admin/<path>`: the page `build` makes, for a signed-in operator; anyone else is sent to sign in. A
    /// refusal `build` throws (a malformed filter, an unknown id) shows as a page with its status.
    func page(
        _ console: RouterGroup<Context>, _ path: RouterPath,
        _ build: @escaping @Sendable (Request, Context) async throws -> ConsoleView
    ) {
        console.get(path) { request, context in
            guard let session = sessions.session(request.cookies[ConsoleSessions.cookie]?.value) else {
                return Self.redirect(to: "/admin/sign-in")
            }
            do {
                return try screen(try await build(request, context), csrf: session.csrfToken)
            } catch {
                guard let refusal = ConsoleRefusal(error) else { throw error }
                return try screen(refusal.view, csrf: session.csrfToken)
            }
        }
    }

    /// Adds `POST /admin/<path>`: for a signed-in operator whose form carries the session's CSRF token, runs
    /// `perform` with the form's fields and sends the browser to the page it answers. A form without the token, or
    /// any form on a read-only server, is refused with 403, and nothing changes.
    func action(
        _ console: RouterGroup<Context>, _ path: RouterPath,
        _ perform: @escaping @Sendable (Request, Context, [String: String]) async throws -> String
    ) {
        console.post(path) { request, context in
            let form = try await Self.form(of: request)
            guard let session = sessions.session(request.cookies[ConsoleSessions.cookie]?.value) else {
                return Self.redirect(to: "/admin/sign-in")
            }
            guard AdminMiddleware.constantTimeEqual(form["csrf"] ?? "", session.csrfToken) else {
                return try screen(ConsoleRefusal.expiredForm.view, csrf: session.csrfToken)
            }
            guard !readOnly else { return try screen(ConsoleRefusal.readOnly.view, csrf: session.csrfToken) }
            do {
                return Self.redirect(to: try await perform(request, context, form))
            } catch {
                guard let refusal = ConsoleRefusal(error) else { throw error }
                return try screen(refusal.view, csrf: session.csrfToken)
            }
        }
    }

    /// Runs an admin command, and waits until the read models show it: the page the browser is sent to next shows it.
    func execute(_ command: Command) async throws {
        let result = try await backend.execute(command, idempotencyKey: nil)
        try await backend.readModels.waitUntilApplied(result.position, timeout: endpoints.consistencyTimeout)
    }

    /// `view` inside the layout, with the navigation and the session's CSRF token.
    private func screen(_ view: ConsoleView, csrf: String) throws -> Response {
        let screen = ConsoleScreen(
            title: view.title, navigation: ConsoleScreen.Navigation(current: view.section, csrf: csrf), error: nil,
            notice: readOnly ? ConsoleScreen.readOnlyNotice : nil, csrf: csrf, refreshSeconds: view.refreshSeconds,
            page: view.page)
        return Self.html(try Self.render(view.template, screen), status: view.status)
    }

    // MARK: Signing in

    /// Checks the form's CSRF token against the sign-in cookie's, then the admin token, at most as often as the limit
    /// on console sign-ins allows from one address.
    private func signIn(_ request: Request, _ context: Context) async throws -> Response {
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
        let screen = ConsoleScreen(
            title: "Sign in", navigation: nil, error: error, notice: nil, csrf: token, refreshSeconds: nil,
            page: [String: String]())
        var response =
            (try? Self.html(Self.render("sign-in", screen), status: status)) ?? Response(status: .internalServerError)
        response.setCookie(signInCookie(value: token, maxAge: 3600))
        return response
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

    // MARK: HTML and forms

    static func render(_ template: String, _ object: Any) throws -> String {
        guard let text = ConsoleTemplates.library.render(object, withTemplate: template) else {
            throw APIError(.internalServerError, "internal", "the console has no template \(template)")
        }
        return text
    }

    /// A form's fields (`application/x-www-form-urlencoded`); a body that is not a form, or over 16 KiB, has none.
    static func form(of request: Request) async throws -> [String: String] {
        let body = try await request.body.collect(upTo: 16 << 10)
        var components = URLComponents()
        // A form writes a space as `+`, which a URL's query leaves as it is.
        components.percentEncodedQuery = String(buffer: body).replacingOccurrences(of: "+", with: "%20")
        var fields: [String: String] = [:]
        for item in components.queryItems ?? [] { fields[item.name] = item.value ?? "" }
        return fields
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
