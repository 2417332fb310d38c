import ChorusDelivery
import ChorusHTTP
import Crypto
import Foundation
import HTTPTypes
import Testing

@Suite("Admin console: each page against the API's answers, its forms, and every value escaped")
struct ConsolePagesTests {
    @Test("Log: newest first, each filter, older pages, an event's detail, and clear refusals")
    func log() async throws {
        try await withAPI { api in
            var browser = ConsoleBrowser(api)
            _ = try await browser.signIn()
            let ana = try await api.register("Ana")
            let bo = try await api.register("Bo")
            let post = try await api.post(ana, "hello log")
            _ = try await api.call(.put, "/v1/users/\(ana.id)/follow", token: bo.token)

            let all = try await browser.page("/admin/log")
            let followed = try #require(all.range(of: "<td>Followed</td>"))
            let created = try #require(all.range(of: "<td>PostCreated</td>"))
            #expect(followed.lowerBound < created.lowerBound, "newest first")
            #expect(all.contains(#"<a href="/admin/log" aria-current="page">Log</a>"#))

            let posts = try await browser.page("/admin/log?type=PostCreated")
            #expect(posts.contains("hello log") && !posts.contains("<td>Followed</td>"))
            #expect(posts.contains("<option selected>PostCreated</option>"), "the form keeps the filter")
            let bos = try await browser.page("/admin/log?user=\(bo.id)")
            #expect(bos.contains("<td>Followed</td>") && !bos.contains("<td>PostCreated</td>"))
            let anas = try await browser.page("/admin/log?user=\(ana.id)")
            #expect(
                anas.contains("<td>Followed</td>") && anas.contains("<td>PostCreated</td>"), "by her, or naming her")
            #expect(anas.components(separatedBy: "<td>UserRegistered</td>").count == 2, "hers alone, not Bo's")
            let stream = try await browser.page("/admin/log?stream=post-\(post)")
            #expect(stream.contains("<td>PostCreated</td>") && !stream.contains("<td>UserRegistered</td>"))
            let second = try await browser.page("/admin/log?from=2&to=2")
            #expect(rows(second) == [2])
            #expect(try await browser.page("/admin/log?since=2999-01-01T00:00:00Z").contains("No events here match."))
            #expect(
                rows(try await browser.page("/admin/log?until=2999-01-01T00:00:00Z")).count == Int(api.head.rawValue))

            let position = try #require(rows(posts).first)
            let detail = try await browser.page("/admin/log/\(position)")
            #expect(detail.contains("<dt>type</dt><dd>PostCreated</dd>") && detail.contains("<dt>text</dt>"))
            #expect(detail.contains("&quot;type&quot;:&quot;PostCreated&quot;"), "the JSON line, escaped")
            #expect(detail.contains(#"<a href="/admin/log" aria-current="page">Log</a>"#))

            for (path, status) in [
                ("/admin/log?from=abc", HTTPResponse.Status.badRequest), ("/admin/log?type=Nope", .badRequest),
                ("/admin/log?since=yesterday", .badRequest), ("/admin/log/999999", .notFound),
            ] {
                let refused = try await browser.get(path)
                #expect(refused.status == status, "\(path)")
                #expect(String(decoding: refused.bytes, as: UTF8.self).contains(#"class="error" role="alert""#))
            }
        }
    }

    @Test("Log: a page shows 50 events and links to the older ones, by position and through a stream's index")
    func logPages() async throws {
        try await withAPI { api in
            var browser = ConsoleBrowser(api)
            _ = try await browser.signIn()
            let ana = try await api.register("Ana")
            for number in 1...55 { _ = try await api.post(ana, "post \(number)") }
            let first = try await browser.page("/admin/log?type=PostCreated")
            #expect(rows(first).count == 50)
            let older = try #require(link("Older events", in: first))
            let rest = try await browser.page(older)
            #expect(rows(rest).count == 5 && link("Older events", in: rest) == nil)
            #expect(Set(rows(first)).isDisjoint(with: rows(rest)))

            // A stream's pages, through the stream index: Ana's own stream, her registration and 55 profile edits.
            for number in 1...55 {
                _ = try await api.call(.patch, "/v1/me", token: ana.token, json: ["bio": "\(number)"])
            }
            let stream = try await browser.page("/admin/log?stream=user-\(ana.id)")
            #expect(rows(stream).count == 50 && !stream.contains("<td>PostCreated</td>"))
            let olderInStream = try await browser.page(try #require(link("Older events", in: stream)))
            // 57 events: the registration, its session and 55 edits.
            #expect(rows(olderInStream).count == 7 && olderInStream.contains("<td>UserRegistered</td>"))
            #expect(rows(stream).min()! > rows(olderInStream).max()!)
        }
    }

    @Test("Projections: Rebuild starts the online rebuild, and the page follows it to its swap")
    func rebuild() async throws {
        try await withAPI { api in
            var browser = ConsoleBrowser(api)
            _ = try await browser.signIn()
            _ = try await api.register("Ana")
            let page = try await browser.page("/admin/projections")
            #expect(page.contains("<td>readModels</td>") && page.contains(">Rebuild</button>"))
            let started = try await browser.submit("/admin/projections/rebuild")
            #expect(started.status == .ok)
            var shown = ""
            for _ in 0..<600 where !shown.contains("The last rebuild was swapped in") {
                shown = try await browser.page("/admin/projections")
                if shown.contains("Rebuilding") {
                    #expect(shown.contains(#"<meta http-equiv="refresh" content="1">"#))
                }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(shown.contains("The last rebuild was swapped in"))
            let status = try await api.call(.get, "/v1/admin/projections", token: APIFixture.adminToken)
            let projections = try #require(status.object["projections"] as? [[String: Any]])
            let last = (projections.first?["lastRebuild"] as? [String: Any])?["outcome"] as? String
            #expect(last == "finished")
        }
    }

    @Test("Reports: content inline and escaped; Remove content, Suspend user and Dismiss do what the API says")
    func reports() async throws {
        try await withAPI { api in
            var browser = ConsoleBrowser(api)
            _ = try await browser.signIn()
            let ana = try await api.register("Ana")
            let evil = try await api.register("<script>alert(1)</script>")
            let post = try await api.post(evil, "<img src=x onerror=alert(1)> <b>bold</b>")
            let comment = try #require(
                try await api.call(.post, "/v1/posts/\(post)/comments", token: evil.token, json: ["text": "<i>hi</i>"])
                    .object["id"] as? String)
            for target in [["commentId": comment], ["userId": evil.id], ["postId": post]] {
                let filed = try await api.call(
                    .post, "/v1/reports", token: ana.token, json: target.merging(["reason": "spam"]) { $1 })
                #expect(filed.status == .created)
            }
            let queue = try await api.call(.get, "/v1/admin/reports", token: APIFixture.adminToken).items
            let ids = queue.compactMap { $0["id"] as? String }
            #expect(ids.count == 3)

            let page = try await browser.page("/admin/reports")
            #expect(!page.contains("<script>alert") && !page.contains("<img src=x") && !page.contains("<b>bold"))
            #expect(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
            #expect(page.contains("&lt;img src=x onerror=alert(1)&gt; &lt;b&gt;bold&lt;/b&gt;"), "the post, inline")
            #expect(page.contains("&lt;i&gt;hi&lt;/i&gt;"), "the comment, inline")
            #expect(page.components(separatedBy: ">Remove content</button>").count == 3, "posts and comments only")

            // Newest first: the post's report, the user's, the comment's.
            _ = try await browser.submit("/admin/reports/\(ids[0])/resolve", ["action": "remove_content"])
            #expect(try await api.call(.get, "/v1/posts/\(post)", token: ana.token).status == .notFound)
            _ = try await browser.submit("/admin/reports/\(ids[2])/resolve", ["action": "dismiss"])
            let suspended = try await browser.submit("/admin/reports/\(ids[1])/resolve", ["action": "suspend_user"])
            #expect(String(decoding: suspended.bytes, as: UTF8.self).contains("No reports here."))
            let login = try await api.call(
                .post, "/v1/auth/login", json: ["email": evil.email, "password": "secret-password"])
            #expect(login.status == .forbidden)
            let resolved = try await browser.page("/admin/reports?state=resolved")
            for resolution in ["remove_content", "dismiss", "suspend_user"] {
                #expect(resolved.contains("Resolved: \(resolution)"))
            }
            #expect(resolved.contains("This post was deleted."))
            let resolvedByAPI = try await api.call(
                .get, "/v1/admin/reports?state=resolved", token: APIFixture.adminToken)
            #expect(resolvedByAPI.items.count == 3)
        }
    }

    @Test(
        "Users: looked up by id, handle or e-mail, with sessions; Suspend and Unsuspend; a forged form changes nothing")
    func users() async throws {
        try await withAPI { api in
            var browser = ConsoleBrowser(api)
            _ = try await browser.signIn()
            let bo = try await api.register("Bo <b>Troll</b>")
            let me = try await api.call(.get, "/v1/me", token: bo.token)
            let handle = try #require(me.object["handle"] as? String)
            for query in [bo.id, "@\(handle)", handle, bo.email.uppercased()] {
                let page = try await browser.page("/admin/users?q=\(ConsoleBrowser.encoded(query))")
                #expect(page.contains("<dt>E-mail</dt><dd>\(bo.email)</dd>"), "\(query)")
                #expect(page.contains("Bo &lt;b&gt;Troll&lt;/b&gt;") && !page.contains("<b>Troll"))
                #expect(page.contains(">Suspend</button>"))
                #expect(page.components(separatedBy: "<tr><td>").count == 2, "one session")
            }
            let listed = try await browser.page("/admin/users")
            #expect(listed.contains(#"<a href="/admin/users?q=\#(bo.id)">"#))
            #expect(try await browser.page("/admin/users?q=nobody-at-all").contains("No user has that id"))

            _ = try await browser.page("/admin/users?q=\(bo.id)")
            let forged = try await browser.post("/admin/users/\(bo.id)/suspend", ["csrf": "forged"])
            #expect(forged.status == .forbidden)
            #expect(try await api.call(.get, "/v1/me", token: bo.token).status == .ok, "not suspended")

            let suspended = String(
                decoding: try await browser.submit("/admin/users/\(bo.id)/suspend").bytes, as: UTF8.self)
            #expect(suspended.contains(#"<p role="status" class="error">Suspended</p>"#))
            #expect(suspended.contains(">Unsuspend</button>") && suspended.contains("No session is open."))
            #expect(try await api.call(.get, "/v1/me", token: bo.token).status == .unauthorized, "sessions ended")
            let login = ["email": bo.email, "password": "secret-password"]
            #expect(try await api.call(.post, "/v1/auth/login", json: login).status == .forbidden)

            let lifted = String(
                decoding: try await browser.submit("/admin/users/\(bo.id)/unsuspend").bytes, as: UTF8.self)
            #expect(lifted.contains(">Suspend</button>"))
            #expect(try await api.call(.post, "/v1/auth/login", json: login).status == .ok)
        }
    }

    @Test("Erasures list each account deletion; Overview counts the pending ones")
    func erasures() async throws {
        try await withAPI { api in
            var browser = ConsoleBrowser(api)
            _ = try await browser.signIn()
            #expect(try await browser.page("/admin/erasures").contains("No account was deleted."))
            let ana = try await api.register("Ana")
            let deleted = try await api.call(.delete, "/v1/me", token: ana.token, json: ["password": "secret-password"])
            #expect(deleted.status == .accepted)
            let page = try await browser.page("/admin/erasures")
            #expect(page.contains(#"<a href="/admin/log?user=\#(ana.id)">\#(ana.id)</a>"#))
            let listed = try await api.call(.get, "/v1/admin/erasures", token: APIFixture.adminToken).items
            let pending = listed.filter { $0["completedAt"] is NSNull }.count
            #expect(page.contains("\(pending) pending of 1 account deletions."))
            #expect(try await browser.page("/admin/overview").contains(#"<a href="/admin/erasures">\#(pending)</a>"#))

            // Looked up, the account says when it was deleted and how its erasure stands, as Erasures does.
            let row = try #require(listed.first)
            let requestedAt = try #require(row["requestedAt"] as? String)
            let stands =
                (row["completedAt"] as? String).map { "its personal data was erased at \($0)" }
                ?? "the erasure of its personal data is pending"
            let user = try await browser.page("/admin/users?q=\(ana.id)")
            #expect(user.contains("User \(ana.id) deleted their account at \(requestedAt); \(stands)."), "\(user)")
            #expect(user.contains(#"<a href="/admin/log?user=\#(ana.id)">Their events in the log</a>"#))
        }
    }

    @Test("Erasures: past 200 account deletions, the newest 200 are listed and the page says so")
    func manyErasures() async throws {
        try await withAPI { api in
            var browser = ConsoleBrowser(api)
            _ = try await browser.signIn()
            var last = ""
            for number in 0...200 {
                let user = try await api.register("Leaver \(number)")
                let deleted = try await api.call(
                    .delete, "/v1/me", token: user.token, json: ["password": "secret-password"])
                #expect(deleted.status == .accepted)
                last = user.id
            }
            let page = try await browser.page("/admin/erasures")
            #expect(page.contains("of 201 account deletions."))
            #expect(page.contains("The newest 200 are listed;"))
            #expect(page.components(separatedBy: "<tr><td>").count == 201, "200 rows")
            #expect(page.contains(#"<a href="/admin/log?user=\#(last)">"#), "the newest among them")
        }
    }

    @Test(
        "Deliveries: a failing webhook and a failing push show in their sections with their errors; each Retry now tries its own outbox again at once"
    )
    func deliveries() async throws {
        var options = APIFixture.options
        // Nothing listens on the discard port: each attempt fails at once, and the next waits an hour.
        var webhooks = WebhookConfiguration(
            url: "http://127.0.0.1:9/hooks", signer: try #require(WebhookSigner(secret: WebhookSigner.makeSecret())))
        webhooks.retryDelay = .seconds(3600)
        options.server.webhooks = webhooks
        var apns = APNsConfiguration(
            key: P256.Signing.PrivateKey().pemRepresentation, keyID: "KEY1234567", teamID: "TEAM123456",
            topic: "com.example.chorus")
        apns.sandboxURL = "https://127.0.0.1:9"
        var push = PushConfiguration(apns: apns)
        push.retryDelay = .seconds(3600)
        options.server.push = push
        try await withAPI(options: options) { api in
            var browser = ConsoleBrowser(api)
            _ = try await browser.signIn()
            let ana = try await api.register("Ana")
            let bo = try await api.register("Bo")
            let phone = ["platform": "apns", "token": String(repeating: "ab", count: 32), "environment": "sandbox"]
            #expect(try await api.call(.post, "/v1/me/devices", token: ana.token, json: phone).status == .created)
            // One webhook (the notification) and one push, both to Ana.
            _ = try await api.call(.put, "/v1/users/\(ana.id)/follow", token: bo.token)

            func attempts(_ outbox: String, in page: String) -> [String] {
                guard let start = page.range(of: "<h2 id=\"\(outbox)\">") else { return [] }
                let section = page[start.upperBound...].components(separatedBy: "</section>")[0]
                return section.components(separatedBy: "<tr><td>").dropFirst().map {
                    $0.components(separatedBy: "<td>").dropFirst().first?.components(separatedBy: "</td>").first ?? ""
                }
            }
            var page = try await browser.page("/admin/deliveries", until: "one attempt at each") {
                attempts("webhooks", in: $0) == ["1"] && attempts("push", in: $0) == ["1"]
            }
            #expect(
                page.contains("<h2 id=\"webhooks\">Webhooks</h2>") && page.contains("Through APNs; this node sends."))
            for outbox in ["webhooks", "push"] {
                let status = try await api.call(.get, "/v1/admin/\(outbox)", token: APIFixture.adminToken)
                #expect(status.object["failing"] as? Int == 1, "\(outbox): \(status.object)")
                #expect((status.object["lastError"] as? String).map { page.contains($0) } == true, "\(outbox)")
            }
            let overview = try await browser.page("/admin/overview")
            #expect(overview.contains("<tr><td>Push</td><td>yes</td><td>0</td><td>1</td><td>1</td>"))

            _ = try await browser.submit("/admin/deliveries/retry", ["outbox": "push"])
            page = try await browser.page("/admin/deliveries", until: "a second attempt at the push") {
                attempts("push", in: $0) == ["2"]
            }
            #expect(attempts("webhooks", in: page) == ["1"], "the webhook waits for its hour")
            _ = try await browser.submit("/admin/deliveries/retry", ["outbox": "webhooks"])
            _ = try await browser.page("/admin/deliveries", until: "a second attempt at the webhook") {
                attempts("webhooks", in: $0) == ["2"]
            }
            let unknown = try await browser.post(
                "/admin/deliveries/retry", ["csrf": browser.csrf ?? "", "outbox": "x"])
            #expect(unknown.status == .badRequest)
        }
    }

    /// The positions of the events a Log page lists.
    private func rows(_ page: String) -> [UInt64] {
        page.components(separatedBy: #"<tr><td><a href="/admin/log/"#).dropFirst().compactMap {
            UInt64($0.prefix { $0.isNumber })
        }
    }

    /// The target of the link named `name`, its `&amp;` read as `&`.
    private func link(_ name: String, in page: String) -> String? {
        guard let end = page.range(of: "\">\(name)</a>"),
            let start = page[..<end.lowerBound].range(of: "<a href=\"", options: .backwards)
        else { return nil }
        return String(page[start.upperBound..<end.lowerBound]).replacingOccurrences(of: "&amp;", with: "&")
    }
}
