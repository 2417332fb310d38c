import ArgumentParser
import AsyncHTTPClient
import ChorusBackend
import ChorusEventText
import ChorusLog
import Foundation
import NIOCore
import NIOHTTP1

struct ConsoleBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "console",
        abstract: "Time each admin console page on a demo log, and what an open Overview costs the server.",
        discussion: """
            Starts `chorus serve` as a child process on a demo log of --events events (or on the data directory of \
            --data, such as one `chorus demo --events 1000000` made), signs in to the console, and asks for each \
            page --requests times in turn, one after another over one connection: the Overview, the Log unfiltered \
            and by a common type, a rare type, a user, a stream and a time range, an event's detail, Projections, \
            Reports, Users (a handle, an e-mail, the list), Erasures and Deliveries. Each page's p99 is a figure, \
            with the target of 50 ms. overview_core_percent is the server's CPU time per Overview (read from /proc) \
            over the Overview's refresh interval: what one open Overview costs, in percent of a core.
            """
    )

    @OptionGroup var output: BenchOutputOptions

    @Option(help: "Events in the demo log made for the run (ignored with --data).")
    var events = 1_000_000

    @Option(help: "A data directory with a demo log and its read models to serve instead of making one.")
    var data: String?

    @Option(help: "Requests for each page.")
    var requests = 200

    mutating func run() async throws {
        #if DEBUG
        printProgress("warning: this is a debug build; benchmark with `swift run -c release chorus bench console`")
        #endif
        guard events >= 1_000, requests > 0 else {
            throw ValidationError("--requests must be positive and --events at least 1000")
        }
        let report: BenchmarkReport
        if let data {
            let server = try await BenchServer(data: data, arguments: ["--no-rate-limits"])
            defer { server.stop() }
            report = try await measure(server)
        } else {
            report = try await BenchServer.withDemo(events: events, users: 0, under: output.workDirectory) {
                server, _ in try await measure(server)
            }
        }
        print(report.table)
        if output.json { print(report.jsonLine) }
    }

    private func measure(_ server: BenchServer) async throws -> BenchmarkReport {
        let console = try await ConsoleBrowsing.signIn(to: server.base, token: server.adminToken)
        do {
            let report = try await measure(server, console)
            try await console.close()
            return report
        } catch {
            try? await console.close()
            throw error
        }
    }

    /// Reports of `user`'s newest posts and of `user`, by other demo users: the Reports page shows them with their
    /// content (the demo writes none).
    private func fileReports(about user: String, on server: BenchServer) async throws {
        printProgress("filing \(Self.reports) reports")
        let reporters = try await server.logInDemoUsers(20..<(20 + Self.reports))
        let posts = try await server.request(
            "GET", "/v1/users/\(user)/posts?limit=\(Self.reports)", token: reporters[0].token)
        let ids = (posts.body["items"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        for (index, reporter) in reporters.enumerated() {
            let target: [String: Any] = index < ids.count ? ["postId": ids[index]] : ["userId": user]
            let (status, _) = try await server.request(
                "POST", "/v1/reports", token: reporter.token, json: target.merging(["reason": "spam"]) { $1 })
            guard status == 201 else { throw BenchmarkError("a report answered \(status)") }
        }
    }

    /// Reports filed before the pages are timed: a page of the Reports queue.
    static let reports = 20

    private func measure(_ server: BenchServer, _ console: ConsoleBrowsing) async throws -> BenchmarkReport {
        let user = try await server.logIn(email: "user7@demo.chorus", password: "password").user
        try await fileReports(about: user, on: server)
        let head = try await server.health()["position"] as? Int ?? 1
        // A time range: the ten minutes before the newest event.
        let newest = try await console.page("/admin/log?from=\(head)&to=\(head)")
        guard let time = ConsoleBrowsing.firstTime(in: newest.body), let newestTime = Timestamps.parse(time) else {
            throw BenchmarkError("the Log page showed no time for event \(head)")
        }
        let since = EventTime(millisecondsSince1970: newestTime.millisecondsSince1970 - 600_000).rfc3339
        let pages: [(name: String, path: String)] = [
            ("overview", "/admin/overview"), ("log", "/admin/log"), ("log_common_type", "/admin/log?type=Liked"),
            ("log_rare_type", "/admin/log?type=ReportFiled"), ("log_user", "/admin/log?user=\(user)"),
            ("log_stream", "/admin/log?stream=user-\(user)"),
            ("log_time_range", "/admin/log?since=\(since)&until=\(time)"), ("event", "/admin/log/\(max(1, head / 2))"),
            ("projections", "/admin/projections"), ("reports", "/admin/reports"),
            ("users_handle", "/admin/users?q=%40user7"), ("users_email", "/admin/users?q=user7%40demo.chorus"),
            ("users_list", "/admin/users"), ("erasures", "/admin/erasures"), ("deliveries", "/admin/deliveries"),
        ]
        var report = BenchmarkReport(suite: "console")
        var worst = 0.0
        for page in pages {
            printProgress("\(page.name): \(requests) requests of \(page.path)")
            let cpuBefore = ProcessCPU.seconds(of: server.processIdentifier)
            var latencies = Latencies()
            for _ in 0..<requests {
                let started = ContinuousClock.now
                let answer = try await console.page(page.path)
                latencies.add(ContinuousClock.now - started)
                guard answer.status == 200 else {
                    throw BenchmarkError("\(page.path) answered \(answer.status)")
                }
            }
            let p99 = latencies.percentile(0.99)
            worst = max(worst, p99)
            report.add("\(page.name)_p50_ms", latencies.percentile(0.5))
            report.add("\(page.name)_p99_ms", p99, target: .atMost(50))
            if page.name == "overview" {
                let cpuPerOverview = (ProcessCPU.seconds(of: server.processIdentifier) - cpuBefore) / Double(requests)
                let overview = try await console.page(page.path).body
                guard
                    let refresh = ConsoleBrowsing.firstMatch(#"http-equiv="refresh" content="([0-9]+)""#, in: overview)
                        .flatMap(Double.init)
                else { throw BenchmarkError("the Overview does not refresh itself") }
                report.add("overview_core_percent", cpuPerOverview / refresh * 100, target: .atMost(1))
            }
        }
        report.add("worst_page_p99_ms", worst, target: .atMost(50))
        return report
    }
}

/// A console signed in over HTTP, as a browser is: its session cookie, sent with each page.
private struct ConsoleBrowsing {
    let base: String
    let cookie: String
    /// A client of its own that answers redirects as they come: the sign-in's 303 carries the session cookie.
    let client: HTTPClient

    /// Signs in through the sign-in form: its CSRF token, from the form and its cookie, and the admin token.
    static func signIn(to base: String, token: String) async throws -> ConsoleBrowsing {
        let client = HTTPClient(
            eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))
        do {
            return try await signIn(to: base, token: token, client: client)
        } catch {
            try await client.shutdown()
            throw error
        }
    }

    private static func signIn(to base: String, token: String, client: HTTPClient) async throws -> ConsoleBrowsing {
        let form = try await exchange(client, base, "GET", "/admin/sign-in")
        guard let signInCookie = form.cookies.first(where: { $0.hasPrefix("chorus_console_sign_in=") }),
            let csrf = firstMatch(#"name="csrf" value="([^"]+)""#, in: form.body)
        else { throw BenchmarkError("the sign-in page had no CSRF token") }
        let signedIn = try await exchange(
            client, base, "POST", "/admin/sign-in", cookie: signInCookie, form: "csrf=\(csrf)&token=\(token)")
        guard signedIn.status == 303, let session = signedIn.cookies.first(where: { $0.hasPrefix("chorus_console=") })
        else { throw BenchmarkError("console sign-in answered \(signedIn.status)") }
        return ConsoleBrowsing(base: base, cookie: session, client: client)
    }

    func page(_ path: String) async throws -> (status: Int, body: String) {
        let answer = try await Self.exchange(client, base, "GET", path, cookie: cookie)
        return (answer.status, answer.body)
    }

    func close() async throws { try await client.shutdown() }

    /// The first recorded time a Log page lists.
    static func firstTime(in page: String) -> String? {
        firstMatch(#"</a></td><td class="time">([0-9T:.\-]+Z)</td>"#, in: page)
    }

    static func firstMatch(_ pattern: String, in text: String) -> String? {
        guard let expression = try? NSRegularExpression(pattern: pattern),
            let match = expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)),
            let range = Range(match.range(at: 1), in: text)
        else { return nil }
        return String(text[range])
    }

    private static func exchange(
        _ client: HTTPClient, _ base: String, _ method: String, _ path: String, cookie: String? = nil,
        form: String? = nil
    ) async throws -> (status: Int, body: String, cookies: [String]) {
        var request = HTTPClientRequest(url: base + path)
        request.method = HTTPMethod(rawValue: method)
        if let cookie { request.headers.add(name: "Cookie", value: cookie) }
        if let form {
            request.body = .bytes(ByteBuffer(string: form))
            request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        }
        let response = try await client.execute(request, timeout: .seconds(60))
        let body = String(buffer: try await response.body.collect(upTo: 16 << 20))
        let cookies = response.headers["Set-Cookie"].compactMap { $0.split(separator: ";").first.map(String.init) }
        return (Int(response.status.code), body, cookies)
    }
}
