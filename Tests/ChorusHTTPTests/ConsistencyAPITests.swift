import ChorusBackend
import ChorusHTTP
import Foundation
import HTTPTypes
import Testing

@Suite("API: positions and retries")
struct ConsistencyAPITests {
    @Test("writes answer their last event's position; reads the position their body reflects")
    func positions() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let created = try await api.call(.post, "/v1/posts", token: ana.token, json: ["text": "one"])
            #expect(created.position == api.head.rawValue)
            let read = try await api.call(
                .get, "/v1/feed/home", token: ana.token, headers: ["Chorus-Min-Position": "\(api.head.rawValue)"])
            #expect(read.status == .ok && (read.position ?? 0) >= created.position ?? .max)
            let health = try await api.call(.get, "/health", token: APIFixture.adminToken)
            #expect(
                health.object["status"] as? String == "ok"
                    && health.object["position"] as? Int == Int(api.head.rawValue))
        }
    }

    @Test("Chorus-Min-Position past what the read models can reach: 503 not_caught_up with Retry-After")
    func notCaughtUp() async throws {
        // Long enough for the registration's own answer on a loaded machine (the whole suite runs at once; 2 s was
        // seen to fall short there).
        var options = APIFixture.options
        options.server.consistencyTimeout = .seconds(10)
        try await withAPI(options: options) { api in
            let ana = try await api.register("Ana")
            let answer = try await api.call(
                .get, "/v1/feed/home", token: ana.token, headers: ["Chorus-Min-Position": "\(api.head.rawValue + 10)"])
            #expect(answer.status == .serviceUnavailable && answer.errorCode == "not_caught_up")
            #expect(answer.headers[.retryAfter] != nil)
        }
    }

    @Test("an Idempotency-Key retry gets the first response and appends nothing; another request under it is 409")
    func idempotency() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let key = ["Idempotency-Key": "post-1"]
            let first = try await api.call(.post, "/v1/posts", token: ana.token, json: ["text": "once"], headers: key)
            let head = api.head
            _ = try await api.call(.put, "/v1/posts/\(first.object["id"] as? String ?? "")/like", token: ana.token)
            let retry = try await api.call(.post, "/v1/posts", token: ana.token, json: ["text": "once"], headers: key)
            #expect(
                retry.status == .created && retry.bytes == first.bytes && retry.position == first.position,
                "the first response, though the post has a like now")
            #expect(api.head.rawValue == head.rawValue + 1, "only the like was appended")
            let other = try await api.call(.post, "/v1/posts", token: ana.token, json: ["text": "twice"], headers: key)
            #expect(other.status == .conflict && other.errorCode == "idempotency_conflict")

            let bo = try await api.register("Bo")
            #expect(
                try await api.call(.post, "/v1/posts", token: bo.token, json: ["text": "once"], headers: key).status
                    == .created,
                "keys belong to their caller")
            for bad in ["", String(repeating: "k", count: 129), "two words", "tab\there", "ключ"] {
                let answer = try await api.call(
                    .post, "/v1/posts", token: ana.token, json: ["text": "x"], headers: ["Idempotency-Key": bad])
                #expect(answer.status == .badRequest, "\(bad)")
            }
        }
    }

    @Test("a retried registration with its key answers the same user and token; with another password it is 409")
    func registrationRetry() async throws {
        try await withAPI { api in
            let body: [String: Any] = ["email": "ana@example.com", "password": "secret1", "name": "Ana"]
            let key = ["Idempotency-Key": "signup-ana"]
            let first = try await api.call(.post, "/v1/auth/register", json: body, headers: key)
            let head = api.head
            let retry = try await api.call(.post, "/v1/auth/register", json: body, headers: key)
            #expect(retry.status == .created && retry.object["token"] as? String == first.object["token"] as? String)
            #expect(api.head == head)
            var other = body
            other["password"] = "guessed"
            #expect(
                try await api.call(.post, "/v1/auth/register", json: other, headers: key).errorCode
                    == "idempotency_conflict")
        }
    }
}
