import ChorusTestSupport
import Foundation
import Synchronization
import Testing

@Suite("chorus serve")
struct ServeCommandTests {
    @Test("over a socket, users walk through the whole app")
    func walkThrough() async throws {
        try await withTemporaryDirectory { directory in
            let server = try await ServerProcess(data: directory)
            func register(_ name: String, _ email: String) async throws -> (id: String, token: String) {
                let answer = try await server.call(
                    "POST", "/v1/auth/register", json: ["email": email, "password": "secret1", "name": name],
                    headers: ["Idempotency-Key": "signup-\(email)"])
                #expect(answer.status == 201)
                let user = try #require(answer.json["user"] as? [String: Any])
                return (try #require(user["id"] as? String), try #require(answer.json["token"] as? String))
            }
            let min = try await register("김민수", "min@example.com")
            let jo = try await register("Jo", "jo@example.com")

            let png = Data(SampleImages.png)
            let media = try await server.call(
                "POST", "/v1/media", token: min.token, body: png, headers: ["Content-Type": "image/png"])
            #expect(media.status == 201)
            let image = try #require(media.json["id"] as? String)
            let post = try await server.call(
                "POST", "/v1/posts", token: min.token, json: ["caption": "노을", "image": image])
            #expect(post.status == 201)
            let postID = try #require(post.json["id"] as? String)

            #expect(
                try await server.call("PUT", "/v1/users/\(min.id)/follow", token: jo.token).json["followers"] as? Int
                    == 1)
            let read = ["Chorus-Min-Position": "\(try #require(post.position))"]
            #expect(try await server.call("GET", "/v1/feed/following", token: jo.token, headers: read).items.count == 1)
            #expect(
                try await server.call("GET", "/v1/feed/home", token: jo.token).items.first?["id"] as? String == postID)
            #expect(
                try await server.call("PUT", "/v1/posts/\(postID)/like", token: jo.token).json["likes"] as? Int == 1)
            #expect(
                try await server.call("POST", "/v1/posts/\(postID)/comments", token: jo.token, json: ["text": "예쁘다"])
                    .status == 201)
            let notifications = try await server.call("GET", "/v1/notifications", token: min.token)
            #expect(notifications.items.map { $0["type"] as? String } == ["comment", "like", "follow"])
            #expect(
                try await server.call("POST", "/v1/messages", token: jo.token, json: ["to": min.id, "text": "hi!"])
                    .status == 201)
            let recent = try await server.call("GET", "/v1/conversations", token: min.token)
            #expect((recent.items.first?["lastMessage"] as? [String: Any])?["text"] as? String == "hi!")

            let edit = try await server.call(
                "PATCH", "/v1/me", token: min.token, json: ["name": "김민지", "profileImage": image])
            let after = ["Chorus-Min-Position": "\(try #require(edit.position))"]
            let feed = try await server.call("GET", "/v1/feed/following", token: jo.token, headers: after)
            let author = try #require(feed.items.first?["author"] as? [String: Any])
            #expect(
                author["name"] as? String == "김민지"
                    && (author["profileImage"] as? String)?.hasSuffix(image + "?size=small") == true)
            let search = try await server.call("GET", "/v1/search/users?q=%E3%84%B1%E3%85%81%E3%84%B1", token: jo.token)
            #expect(search.items.isEmpty, "ㄱㅁㄱ matches no one")
            let initials = try await server.call(
                "GET", "/v1/search/users?q=%E3%84%B1%E3%85%81%E3%85%88", token: jo.token)
            #expect(initials.items.map { $0["id"] as? String } == [min.id], "ㄱㅁㅈ finds 김민지")

            #expect(try await server.call("POST", "/v1/auth/logout", token: jo.token).status == 204)
            #expect(try await server.call("GET", "/v1/me", token: jo.token).status == 401)
            #expect(await server.stop() == 0)
        }
    }

    @Test(
        "--log-level debug logs each answered request, without its query; the default does not; a bad level is refused")
    func accessLog() async throws {
        try await withTemporaryDirectory { directory in
            let quiet = try await ServerProcess(data: directory + "/quiet")
            _ = try await quiet.call("GET", "/health")
            #expect(await quiet.stop() == 0)
            #expect(!quiet.standardError().contains("] request"), "info, the default, logs no request")

            let server = try await ServerProcess(data: directory + "/debug", environment: ["CHORUS_LOG_LEVEL": "debug"])
            _ = try await server.call("GET", "/health")
            let missing = try await server.call("GET", "/v1/search/users?q=secret%20name")
            #expect(missing.status == 401)
            #expect(await server.stop() == 0)
            let lines = server.standardError().split(separator: "\n")
            let health = lines.filter { $0.contains("] request") && $0.contains("path=/health") }
            #expect(
                !health.isEmpty
                    && health.allSatisfy {
                        $0.contains("method=GET") && $0.contains("status=200") && $0.contains("ms=")
                            && $0.contains("hb.request.id=")
                    })
            #expect(lines.contains { $0.contains("path=/v1/search/users") && $0.contains("status=401") })
            #expect(!server.standardError().contains("secret"), "the query is not logged")

            let refused = try await runChorus(["serve", "--data", directory + "/refused", "--log-level", "loud"])
            #expect(refused.status != 0)
            #expect(refused.standardError.contains("--log-level"))
        }
    }

    @Test("SIGTERM finishes the requests in flight and exits 0; every acknowledged write is there after a restart")
    func gracefulShutdown() async throws {
        try await withTemporaryDirectory { directory in
            let server = try await ServerProcess(data: directory)
            let register = try await server.call(
                "POST", "/v1/auth/register", json: ["email": "a@example.com", "password": "secret1", "name": "A"])
            let token = try #require(register.json["token"] as? String)
            let answered = AnswerCount()
            let acknowledged = try await withThrowingTaskGroup(of: String?.self) { group in
                for index in 0..<40 {
                    group.addTask {
                        let answer = try? await server.call(
                            "POST", "/v1/posts", token: token, json: ["text": "post \(index)"])
                        answered.count.add(1, ordering: .relaxed)
                        return answer?.status == 201 ? answer?.json["id"] as? String : nil
                    }
                }
                // SIGTERM as soon as the first answer is in, with the others on their way (on a busy machine a fixed
                // pause could end before any request reached the server).
                try await eventually("a first answer", every: .milliseconds(2)) {
                    answered.count.load(ordering: .relaxed) > 0
                }
                let status = await server.stop()
                #expect(status == 0, "a clean exit")
                return try await group.reduce(into: [String]()) { if let id = $1 { $0.append(id) } }
            }
            #expect(!acknowledged.isEmpty, "some writes were answered before the server stopped")
            #expect(server.standardError().contains("stopped"))

            let restarted = try await ServerProcess(data: directory)
            let login = try await restarted.call(
                "POST", "/v1/auth/login", json: ["email": "a@example.com", "password": "secret1"])
            let again = try #require(login.json["token"] as? String)
            for id in acknowledged {
                #expect(try await restarted.call("GET", "/v1/posts/\(id)", token: again).status == 200, "post \(id)")
            }
            #expect(try await restarted.call("GET", "/v1/me", token: token).status == 200, "tokens survive a restart")
            #expect(await restarted.stop() == 0)
        }
    }
}

/// Answers received so far, shared by the tasks that send.
final class AnswerCount: Sendable {
    let count = Atomic<Int>(0)
}
