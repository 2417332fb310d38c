import ChorusProcesses
import ChorusTestSupport
import Foundation
import Testing

@Suite("API: unread counts and read receipts")
struct UnreadAPITests {
    @Test(
        "/v1/me counts unread notifications; POST /v1/notifications/read marks them read up to one; repeats change nothing"
    )
    func notifications() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let bo = try await api.register("Bo")
            let cy = try await api.register("Cy")
            let post = try await api.post(ana, "ana's post")
            _ = try await api.call(.put, "/v1/posts/\(post)/like", token: bo.token)
            _ = try await api.call(.put, "/v1/users/\(ana.id)/follow", token: cy.token)
            _ = try await api.call(.post, "/v1/posts/\(post)/comments", token: cy.token, json: ["text": "nice"])

            func unread() async throws -> Int? {
                try await api.call(.get, "/v1/me", token: ana.token).object["unreadNotifications"] as? Int
            }
            #expect(try await unread() == 3)
            let listed = try await api.call(.get, "/v1/notifications", token: ana.token).items
            let ids = listed.compactMap { $0["id"] as? String }
            #expect(ids.count == 3)

            let marked = try await api.call(.post, "/v1/notifications/read", token: ana.token, json: ["upTo": ids[1]])
            #expect(marked.status == .ok && marked.object["unreadNotifications"] as? Int == 1)
            let head = api.head
            let again = try await api.call(.post, "/v1/notifications/read", token: ana.token, json: ["upTo": ids[2]])
            #expect(again.object["unreadNotifications"] as? Int == 1, "marking up to an older one changes nothing")
            #expect(api.head == head)
            _ = try await api.call(.post, "/v1/notifications/read", token: ana.token, json: ["upTo": ids[0]])
            #expect(try await unread() == 0)
            _ = try await api.call(.delete, "/v1/posts/\(post)/like", token: bo.token)
            _ = try await api.call(.put, "/v1/posts/\(post)/like", token: bo.token)
            #expect(try await unread() == 1, "a new notification is unread")

            let bad = try await api.call(.post, "/v1/notifications/read", token: ana.token, json: ["upTo": "nope"])
            #expect(bad.status == .unprocessableContent && bad.errorCode == "invalid_field")
            let seenByBo = try await api.call(.get, "/v1/users/\(ana.id)", token: bo.token).object
            #expect(seenByBo["unreadNotifications"] == nil && seenByBo["unreadConversations"] == nil)
        }
    }

    @Test(
        "conversations count unread messages; reading one clears them and shows the partner a read receipt; repeats change nothing"
    )
    func conversations() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let bo = try await api.register("Bo")
            var sent: [String] = []
            for text in ["hi", "are you there?"] {
                let message = try await api.call(
                    .post, "/v1/messages", token: bo.token, json: ["to": ana.id, "text": text])
                sent.append(try #require(message.object["id"] as? String))
            }
            #expect(try await api.call(.get, "/v1/me", token: ana.token).object["unreadConversations"] as? Int == 1)
            let anasRow = try #require(try await api.call(.get, "/v1/conversations", token: ana.token).items.first)
            #expect(anasRow["unread"] as? Int == 2 && anasRow["partnerReadUpTo"] is NSNull)
            let bosRow = try #require(try await api.call(.get, "/v1/conversations", token: bo.token).items.first)
            #expect(bosRow["unread"] as? Int == 0 && bosRow["partnerReadUpTo"] is NSNull)

            let read = try await api.call(.post, "/v1/conversations/\(bo.id)/read", token: ana.token)
            #expect(read.status == .ok && read.object["unreadConversations"] as? Int == 0)
            let head = api.head
            #expect(try await api.call(.post, "/v1/conversations/\(bo.id)/read", token: ana.token).status == .ok)
            #expect(api.head == head, "nothing new to read: nothing appended")

            let receipt = try #require(try await api.call(.get, "/v1/conversations", token: bo.token).items.first)
            #expect(receipt["partnerReadUpTo"] as? String == sent[1])
            let cleared = try #require(try await api.call(.get, "/v1/conversations", token: ana.token).items.first)
            #expect(cleared["unread"] as? Int == 0)

            _ = try await api.call(.post, "/v1/messages", token: ana.token, json: ["to": bo.id, "text": "yes!"])
            _ = try await api.call(.post, "/v1/messages", token: bo.token, json: ["to": ana.id, "text": "great"])
            let later = try #require(try await api.call(.get, "/v1/conversations", token: bo.token).items.first)
            #expect(later["unread"] as? Int == 1, "Ana's reply")
            #expect(later["partnerReadUpTo"] as? String == sent[1], "Ana has not read Bo's newest")

            let unknown = try await api.call(
                .post, "/v1/conversations/01m8zzzzzzzzzzzzzzzzzzzzzz/read", token: ana.token)
            #expect(unknown.status == .notFound)
        }
    }

    @Test("the conversations topic sends read when the partner reads, once, resuming after Last-Event-ID")
    func liveReceipts() async throws {
        var options = APIFixture.options
        options.server.heartbeat = .milliseconds(300)
        try await withAPI(.live, options: options) { api in
            let ana = try await api.register("Ana")
            let bo = try await api.register("Bo")
            let message = try await api.call(
                .post, "/v1/messages", token: bo.token, json: ["to": ana.id, "text": "hi"])
            let id = try #require(message.object["id"] as? String)
            let start = try #require(try await api.call(.get, "/v1/conversations", token: bo.token).position)
            _ = try await api.call(.post, "/v1/conversations/\(bo.id)/read", token: ana.token)

            let port = try #require(api.client.port)
            func stream(after position: UInt64) async throws -> [LiveEvent] {
                let headers = ["Authorization": "Bearer \(bo.token)", "Last-Event-ID": "\(position)"]
                return try await BlockingWork.run {
                    let stream = try RawHTTPStream(port: port, path: "/v1/live?topics=conversations", headers: headers)
                    guard stream.status == 200 else { throw StreamError("status \(stream.status)") }
                    return try stream.eventsUntilHeartbeat()
                }
            }
            let events = try await stream(after: start)
            #expect(events.map(\.name) == ["read"])
            #expect(events.first?.data["userId"] as? String == ana.id)
            #expect(events.first?.data["partnerReadUpTo"] as? String == id)
            #expect(try await stream(after: try #require(events.first?.id)).isEmpty)
        }
    }
}
