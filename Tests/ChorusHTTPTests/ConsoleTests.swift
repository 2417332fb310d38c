import ChorusHTTP
import ChorusTestSupport
import Foundation
import HTTPTypes
import Synchronization
import Testing

@Suite("Admin console: sign-in, its session cookie and CSRF, the Overview, and the console off")
struct ConsoleTests {
    @Test("signing in with the admin token answers a strict HttpOnly cookie; Overview shows the log's head")
    func signInAndOverview() async throws {
        try await withAPI { api in
            var browser = ConsoleBrowser(api)
            let root = try await browser.get("/admin")
            #expect(root.status == .seeOther && root.headers[.location] == "/admin/overview")
            let away = try await browser.get("/admin/overview")
            #expect(away.status == .seeOther && away.headers[.location] == "/admin/sign-in")

            let form = try await browser.get("/admin/sign-in")
            let page = String(decoding: form.bytes, as: UTF8.self)
            #expect(form.status == .ok && form.headers[.contentType] == "text/html; charset=utf-8")
            #expect(page.contains(#"<label for="token">Admin token</label>"#) && page.contains(">Sign in</button>"))
            let policy = try #require(form.headers[.contentSecurityPolicy])
            #expect(policy.contains("default-src 'self'") && policy.contains("frame-ancestors 'none'"))

            let wrong = try await browser.post("/admin/sign-in", ["csrf": browser.csrf ?? "", "token": "guess"])
            #expect(wrong.status == .unauthorized)
            #expect(String(decoding: wrong.bytes, as: UTF8.self).contains("That is not the admin token."))
            #expect(browser.cookies["chorus_console"] == nil)

            let signedIn = try await browser.signIn()
            #expect(signedIn.status == .seeOther && signedIn.headers[.location] == "/admin/overview")
            let cookie = try #require(
                signedIn.headers[values: .setCookie].first { $0.hasPrefix("chorus_console=") })
            for attribute in ["HttpOnly", "SameSite=Strict", "Path=/admin", "Max-Age=43200"] {
                #expect(cookie.contains(attribute), "\(cookie)")
            }
            #expect(!cookie.contains("Secure"), "served over http here")

            _ = try await api.register("Ana")
            let overview = try await browser.get("/admin/overview")
            let shown = String(decoding: overview.bytes, as: UTF8.self)
            #expect(overview.status == .ok)
            let head = api.backend.log.head.rawValue
            #expect(shown.contains("<dt>Log head</dt><dd>\(head)</dd>"), "\(shown)")
            #expect(shown.contains(#"<td>readModels</td><td>\#(head)</td><td>0</td><td>live</td>"#))
            #expect(shown.contains(#"<meta http-equiv="refresh" content="5">"#))
            #expect(shown.contains(#"<a href="/admin/overview" aria-current="page">Overview</a>"#))
            #expect(overview.headers[.cacheControl] == "no-store")
            #expect(shown.contains("Neither webhooks nor push are configured."))

            let out = try await browser.post("/admin/sign-out", ["csrf": browser.csrf ?? ""])
            #expect(out.status == .seeOther && out.headers[.location] == "/admin/sign-in")
            #expect(browser.cookies["chorus_console"] == nil)
            #expect(try await browser.get("/admin/overview").status == .seeOther)
        }
    }

    @Test("a form without its CSRF token is refused and changes nothing: no sign-in, no sign-out")
    func csrf() async throws {
        try await withAPI { api in
            var forger = ConsoleBrowser(api)
            let forged = try await forger.post("/admin/sign-in", ["token": APIFixture.adminToken])
            #expect(forged.status == .forbidden && forger.cookies["chorus_console"] == nil)
            _ = try await forger.get("/admin/sign-in")
            let wrong = try await forger.post("/admin/sign-in", ["csrf": "not-it", "token": APIFixture.adminToken])
            #expect(wrong.status == .forbidden && forger.cookies["chorus_console"] == nil)

            var browser = ConsoleBrowser(api)
            _ = try await browser.signIn()
            let session = try #require(browser.cookies["chorus_console"])
            var other = browser
            let refused = try await other.post("/admin/sign-out", ["csrf": "forged"])
            #expect(refused.status == .forbidden)
            #expect(browser.cookies["chorus_console"] == session)
            #expect(try await browser.get("/admin/overview").status == .ok, "still signed in")
        }
    }

    @Test("sign-ins from one address are limited: the 11th in a row answers 429 with Retry-After, 6 s later one more")
    func signInLimit() async throws {
        // The limiter's clock stands still until the test moves it: a slow run must not refill it meanwhile.
        let clock = RateLimitTests.TestClock()
        var options = APIFixture.options
        options.server.rateLimits.clock = { clock.now }
        try await withAPI(.live, options: options) { api in
            var browser = ConsoleBrowser(api)
            for _ in 0..<10 {
                #expect(try await browser.signIn("wrong").status == .unauthorized)
            }
            let limited = try await browser.signIn()
            #expect(limited.status == .tooManyRequests && limited.headers[.retryAfter] == "6")
            #expect(browser.cookies["chorus_console"] == nil)
            clock.advance(.seconds(6))
            #expect(try await browser.signIn().status == .seeOther && browser.cookies["chorus_console"] != nil)
        }
    }

    @Test("off, or with no admin token to sign in with, every /admin path is 404")
    func off() async throws {
        var off = APIFixture.options
        off.server.adminConsole = false
        var tokenless = APIFixture.options
        tokenless.server.adminToken = nil
        for options in [off, tokenless] {
            try await withAPI(options: options) { api in
                for path in [
                    "/admin", "/admin/sign-in", "/admin/overview", "/admin/console.css", "/admin/log", "/admin/log/1",
                    "/admin/projections", "/admin/reports", "/admin/users", "/admin/erasures", "/admin/deliveries",
                ] {
                    let answer = try await api.call(.get, path)
                    #expect(answer.status == .notFound, "\(path)")
                }
                let signIn = try await api.call(.post, "/admin/sign-in")
                #expect(signIn.status == .notFound)
            }
        }
    }

    @Test(
        "on a read-only server the console signs in and out and shows its pages, saying it is read-only; each action is refused with a page, and nothing changes"
    )
    func readOnly() async throws {
        try await withTemporaryDirectory { directory in
            let written = Mutex<APIFixture.User?>(nil)
            try await withAPI(in: directory) { api in
                let bo = try await api.register("Bo")
                written.withLock { $0 = bo }
            }
            let bo = try #require(written.withLock { $0 })
            var options = APIFixture.options
            options.server.readOnly = true
            try await withAPI(in: directory, options: options) { api in
                var browser = ConsoleBrowser(api)
                let signedIn = try await browser.signIn()
                #expect(signedIn.status == .seeOther && signedIn.headers[.location] == "/admin/overview")
                let notice =
                    "This server is read-only: it shows a past state of the log, and its buttons change nothing."
                for path in ["/admin/overview", "/admin/users?q=\(bo.id)", "/admin/projections"] {
                    #expect(try await browser.page(path).contains(notice), "\(path)")
                }
                let head = api.backend.log.head

                _ = try await browser.page("/admin/users?q=\(bo.id)")
                let suspend = try await browser.submit("/admin/users/\(bo.id)/suspend")
                #expect(suspend.status == .forbidden)
                #expect(String(decoding: suspend.bytes, as: UTF8.self).contains("this server is read-only"))
                _ = try await browser.page("/admin/projections")
                #expect(try await browser.submit("/admin/projections/rebuild").status == .forbidden)
                #expect(api.backend.log.head == head)
                #expect(try await browser.page("/admin/projections").contains("<td>live</td>"), "no rebuild began")
                let login = ["email": bo.email, "password": "secret-password"]
                #expect(try await api.call(.post, "/v1/auth/login", json: login).status == .forbidden, "the API too")

                let out = try await browser.post("/admin/sign-out", ["csrf": browser.csrf ?? ""])
                #expect(out.status == .seeOther && browser.cookies["chorus_console"] == nil)
            }
        }
    }
}
