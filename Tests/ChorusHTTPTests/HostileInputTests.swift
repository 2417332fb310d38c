import ChorusBackend
import ChorusHTTP
import ChorusProcesses
import ChorusTestSupport
import Foundation
import HTTPTypes
import Testing

@Suite("Hostile input")
struct HostileInputTests {
    @Test(
        "NUL bytes, huge numbers, overlong and empty e-mails, odd Idempotency-Keys and empty cursors: a clear answer, never a 5xx"
    )
    func oddValues() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let head = api.head

            // NUL, like every control character but newline and tab, is refused in text, naming what it is.
            let nul = try await api.call(.post, "/v1/posts", token: ana.token, json: ["text": "a\u{0}b"])
            #expect(nul.status == .unprocessableContent && nul.errorCode == "invalid_field")
            #expect(String(decoding: nul.bytes, as: UTF8.self).contains("U+0000"))
            #expect(
                try await api.call(.post, "/v1/posts", token: ana.token, json: ["text": "a\nb\tc"]).status == .created)

            // A number where text belongs, however large, is the field's 400.
            let huge = try await api.call(
                .post, "/v1/posts", token: ana.token, body: Array(#"{"text": 1e999999}"#.utf8),
                headers: ["Content-Type": "application/json"])
            #expect(huge.status == .badRequest)

            // An e-mail past what any account can have: refused as wrong credentials or as invalid, not a 503
            // (its key is longer than LMDB allows).
            let long = String(repeating: "가", count: 200) + "@example.com"
            let login = try await api.call(
                .post, "/v1/auth/login", json: ["email": long, "password": "secret-password"])
            #expect(login.status == .unauthorized && login.errorCode == "invalid_credentials")
            let signUp = try await api.call(
                .post, "/v1/auth/register", json: ["email": long, "password": "secret-password", "name": "Long"])
            #expect(signUp.status == .unprocessableContent && signUp.errorCode == "invalid_email")
            let veryLong = String(repeating: "a", count: 5_000) + "@example.com"
            #expect(
                try await api.call(.post, "/v1/auth/login", json: ["email": veryLong, "password": "x"]).status
                    == .unauthorized)
            // An empty one is no key at all to LMDB: wrong credentials too (schemathesis found it answering 503).
            let empty = try await api.call(.post, "/v1/auth/login", json: ["email": "", "password": "secret-password"])
            #expect(empty.status == .unauthorized && empty.errorCode == "invalid_credentials")

            // Idempotency-Keys that are not 1 to 128 visible ASCII characters.
            for key in ["", String(repeating: "k", count: 129), "tab\there", "naïve", "a b"] {
                let answer = try await api.call(
                    .post, "/v1/posts", token: ana.token, json: ["text": "keyed"], headers: ["Idempotency-Key": key])
                #expect(answer.status == .badRequest, "Idempotency-Key \(key.debugDescription)")
            }

            // An empty cursor is the first page.
            let page = try await api.call(.get, "/v1/feed/home?cursor=", token: ana.token)
            #expect(page.status == .ok && page.items.count == 1)
            #expect(api.head.rawValue == head.rawValue + 1, "only the post with a newline and a tab was appended")
        }
    }

    @Test("header injection in Idempotency-Key over a raw socket is a 400, and nothing is appended")
    func headerInjection() async throws {
        try await withAPI(.live) { api in
            let port = try #require(api.client.port)
            let ana = try await api.register("Ana")
            let head = api.head
            let status: Int = try await BlockingWork.run {
                let descriptor = try connectToLoopback(port: port)
                defer { close(descriptor) }
                let body = #"{"text":"injected"}"#
                // A bare CR inside the value: the header would end there for a lax parser.
                let request =
                    "POST /v1/posts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(ana.token)\r\n"
                    + "Content-Type: application/json\r\nIdempotency-Key: abc\rX-Injected: 1\r\n"
                    + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
                _ = request.withCString { send(descriptor, $0, strlen($0), 0) }
                var buffer = [UInt8](repeating: 0, count: 4096)
                let count = receive(descriptor, into: &buffer)
                guard count > 0 else { return 0 }  // closed without an answer: also refused
                let text = String(decoding: buffer[..<count], as: UTF8.self)
                return Int(text.split(separator: " ").dropFirst().first ?? "") ?? -1
            }
            #expect(status == 0 || status == 400, "status \(status)")
            #expect(api.head == head)
        }
    }

    @Test("two thousand live streams at once: each opens, the server keeps answering, and all close cleanly")
    func manyLiveStreams() async throws {
        // Opening and reading 2,000 streams can take longer than a minute on a busy machine: the test client's own
        // connection must not be closed as idle meanwhile.
        // One user holds them all, past the bound on streams per user, which `LiveSessionTests` proves.
        var options = APIFixture.options
        options.server.idleTimeout = .seconds(600)
        options.server.liveStreamsPerUser = nil
        try await withAPI(.live, options: options) { api in
            let port = try #require(api.client.port)
            let ana = try await api.register("Ana")
            let request =
                "GET /v1/live?topics=notifications,feed HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(ana.token)\r\n\r\n"
            let opened: [Int32] = try await BlockingWork.run {
                var sockets: [Int32] = []
                for _ in 0..<2_000 {
                    let descriptor = try connectToLoopback(port: port)
                    _ = request.withCString { send(descriptor, $0, strlen($0), 0) }
                    sockets.append(descriptor)
                }
                return sockets
            }
            defer { for descriptor in opened { close(descriptor) } }
            // Every stream got its head and its opening comment.
            let answered: Int = try await BlockingWork.run {
                var count = 0
                var buffer = [UInt8](repeating: 0, count: 1024)
                for descriptor in opened {
                    var text = ""
                    while !text.contains(": open") {
                        let read = receive(descriptor, into: &buffer)
                        guard read > 0 else { break }
                        text += String(decoding: buffer[..<read], as: UTF8.self)
                    }
                    if text.hasPrefix("HTTP/1.1 200"), text.contains(": open") { count += 1 }
                }
                return count
            }
            #expect(answered == 2_000)
            #expect(try await api.call(.get, "/health").status == .ok)
            let post = try await api.call(.post, "/v1/posts", token: ana.token, json: ["text": "to everyone listening"])
            #expect(post.status == .created)
        }
    }
}
