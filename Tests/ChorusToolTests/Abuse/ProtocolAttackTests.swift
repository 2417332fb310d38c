import ChorusTestSupport
import Foundation
import Testing

/// The rest of finding 9: duplicate JSON keys (the server kept the first, where a proxy may keep the last), 400s the
/// HTTP layer answered with an empty body or not at all, and media answers a browser could sniff as another type.
@Suite("Abuse: requests the contract does not describe")
struct ProtocolAttackTests {
    @Test("a JSON body with a field given twice is 400, however the second is spelt, and nothing is appended")
    func duplicateKeys() async throws {
        try await withServerUnderAttack { server in
            let user = try await server.user("Du")
            let before = try await server.head()
            let bodies = [
                #"{"text": "harmless", "text": "evil"}"#, #"{"text": "harmless", "t\u0065xt": "evil"}"#,
                #"{"text": "a", "caption": "b", "text": "c"}"#,
            ]
            for body in bodies {
                let answer = try await server.call(
                    "POST", "/v1/posts", token: user.token, body: Data(body.utf8),
                    headers: ["Content-Type": "application/json"])
                #expect(answer.status == 400 && answer.text.contains("given twice"), "\(body): \(answer.text)")
            }
            let login = try await server.call(
                "POST", "/v1/auth/login",
                body: Data(
                    #"{"email": "x@example.com", "email": "\#(user.email)", "password": "secret-password"}"#.utf8),
                headers: ["Content-Type": "application/json"])
            #expect(login.status == 400)
            #expect(try await server.head() == before)
            // Keys that differ are no duplicates, and a key inside a string is no key.
            let fine = try await server.call(
                "POST", "/v1/posts", token: user.token, body: Data(#"{"text": "\"text\": 1", "caption": "text"}"#.utf8),
                headers: ["Content-Type": "application/json"])
            #expect(fine.status == 201)
        }
    }

    @Test("a request that is not valid HTTP/1.1 gets the JSON error with 400, then the connection closes")
    func malformedRequests() async throws {
        try await withServerUnderAttack { server in
            let requests: [(String, String)] = [
                ("a header without a colon", "GET /health HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n"),
                (
                    "headers past the limit",
                    "GET /health HTTP/1.1\r\nHost: x\r\nX: \(String(repeating: "a", count: 90_000))\r\n\r\n"
                ),
                ("a method HTTP has not", "G@T /health HTTP/1.1\r\nHost: x\r\n\r\n"),
                ("a target without a path", "GET health HTTP/1.1\r\nHost: x\r\n\r\n"),
                ("an HTTP version the server does not speak", "GET /health HTTP/9.9\r\nHost: x\r\n\r\n"),
                (
                    "Content-Length beside chunked (request smuggling)",
                    "POST /v1/auth/login HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                        + "Content-Length: 5\r\n\r\n0\r\n\r\n"
                ),
                (
                    "two Content-Lengths that differ",
                    "POST /v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab"
                ),
                ("garbage after a good request", "GET /health HTTP/1.1\r\nHost: x\r\n\r\nGARBAGE\r\n\r\n"),
            ]
            for (name, request) in requests {
                let answer = try await server.rawExchange(Array(request.utf8))
                // The garbage after a good request follows that request's own answer.
                let last = answer.components(separatedBy: "HTTP/1.1 ").last ?? ""
                #expect(last.hasPrefix("400 "), "\(name): \(answer.prefix(200))")
                #expect(last.lowercased().contains("content-type: application/json"), "\(name)")
                #expect(last.lowercased().contains("x-content-type-options: nosniff"), "\(name)")
                #expect(last.contains(#"{"error":{"code":"bad_request","message":"#), "\(name): \(last.suffix(200))")
            }
            // A broken chunked body of a request already read is that request's 400, in JSON too.
            let chunk = try await server.rawExchange(
                Array("POST /v1/auth/login HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n".utf8)
            )
            #expect(
                chunk.hasPrefix("HTTP/1.1 400 ") && chunk.contains(#""code":"bad_request""#), "\(chunk.prefix(300))")
            #expect(try await server.call("GET", "/health").status == 200, "the server goes on")
        }
    }

    @Test("every answer, media's and errors' included, tells browsers not to sniff another type")
    func noSniff() async throws {
        try await withServerUnderAttack { server in
            let user = try await server.user("Me")
            // A PNG's signature before what a browser would run as HTML if it guessed: refused, as it is no image.
            let bytes =
                [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array("<html><script>alert(1)</script>".utf8)
            let refused = try await server.call(
                "POST", "/v1/media", token: user.token, body: Data(bytes), headers: ["Content-Type": "image/png"])
            #expect(refused.status == 422 && refused.headers["x-content-type-options"] == "nosniff")
            // A real PNG with the HTML in its metadata: stored without it.
            let polyglot = SampleImages.png(withText: "<html><script>alert(1)</script>")
            let upload = try await server.call(
                "POST", "/v1/media", token: user.token, body: Data(polyglot), headers: ["Content-Type": "image/png"])
            let id = try #require(upload.json["id"] as? String, "\(upload.text)")
            #expect(try await server.call("GET", "/v1/media/\(id)").text.contains("<script>") == false)
            for (path, token) in [
                ("/v1/media/\(id)", nil), ("/v1/media/nope", nil), ("/v1/me", user.token), ("/v1/me", nil),
                ("/health", nil), ("/openapi.yaml", nil), ("/no-such-route", nil),
            ] as [(String, String?)] {
                let answer = try await server.call("GET", path, token: token)
                #expect(answer.headers["x-content-type-options"] == "nosniff", "\(path): \(answer.status)")
            }
        }
    }
}
