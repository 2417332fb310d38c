import ChorusProcesses
import ChorusTestSupport
import Foundation
import Testing

@Suite("API: rooms")
struct RoomAPITests {
    @Test(
        "a room is made, joined and left; only members write and read its messages, in order; unknown rooms are 404 and bad input appends nothing"
    )
    func rooms() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let bo = try await api.register("Bo")
            let made = try await api.call(.post, "/v1/rooms", token: ana.token, json: ["name": "  Flash Chat  "])
            #expect(made.status == .created)
            let room = try #require(made.object["id"] as? String)
            #expect(made.object["name"] as? String == "Flash Chat")
            #expect(made.object["members"] as? Int == 1 && made.object["isMember"] as? Bool == true)
            #expect(made.object["createdAt"] is String)

            func roomIDs(_ path: String, _ user: APIFixture.User) async throws -> [String] {
                try await api.call(.get, path, token: user.token).items.compactMap { $0["id"] as? String }
            }
            #expect(try await roomIDs("/v1/rooms", ana) == [room])
            #expect(try await roomIDs("/v1/rooms", bo).isEmpty)
            let everyRoom = try await api.call(.get, "/v1/rooms?scope=all", token: bo.token).items
            #expect(everyRoom.map { $0["id"] as? String } == [room] && everyRoom[0]["isMember"] as? Bool == false)

            let messages = "/v1/rooms/\(room)/messages"
            let head = api.head
            let outsider = try await api.call(.post, messages, token: bo.token, json: ["text": "let me in"])
            #expect(outsider.status == .forbidden && outsider.errorCode == "forbidden")
            #expect(try await api.call(.get, messages, token: bo.token).status == .forbidden)
            #expect(api.head == head, "a refusal appends nothing")

            let joined = try await api.call(.put, "/v1/rooms/\(room)/membership", token: bo.token)
            #expect(joined.status == .ok && joined.object["members"] as? Int == 2)
            #expect(joined.object["isMember"] as? Bool == true)
            let joinedHead = api.head
            #expect(try await api.call(.put, "/v1/rooms/\(room)/membership", token: bo.token).status == .ok)
            #expect(api.head == joinedHead, "joining again changes nothing")

            for (user, text) in [(ana, "hi all"), (bo, "hello"), (ana, "welcome, Bo")] {
                let sent = try await api.call(.post, messages, token: user.token, json: ["text": text])
                #expect(sent.status == .created && sent.object["roomId"] as? String == room)
                #expect(sent.object["to"] is NSNull && sent.object["text"] as? String == text)
            }
            let oldestFirst = try await api.call(.get, messages + "?order=asc", token: bo.token).items
            #expect(oldestFirst.map { $0["text"] as? String } == ["hi all", "hello", "welcome, Bo"])
            #expect(
                oldestFirst.map { ($0["from"] as? [String: Any])?["id"] as? String } == [ana.id, bo.id, ana.id])
            let newestFirst = try await api.call(.get, messages + "?limit=2", token: ana.token)
            #expect(newestFirst.items.map { $0["text"] as? String } == ["welcome, Bo", "hello"])
            let cursor = try #require(newestFirst.object["nextCursor"] as? String)
            let rest = try await api.call(.get, messages + "?limit=2&cursor=\(cursor)", token: ana.token).items
            #expect(rest.map { $0["text"] as? String } == ["hi all"])

            let left = try await api.call(.delete, "/v1/rooms/\(room)/membership", token: bo.token)
            #expect(
                left.status == .ok && left.object["members"] as? Int == 1 && left.object["isMember"] as? Bool == false)
            #expect(try await api.call(.post, messages, token: bo.token, json: ["text": "?"]).status == .forbidden)
            #expect(try await roomIDs("/v1/rooms", bo).isEmpty)

            let unknown = "01m8zzzzzzzzzzzzzzzzzzzzzz"
            #expect(try await api.call(.get, "/v1/rooms/\(unknown)", token: bo.token).status == .notFound)
            #expect(try await api.call(.put, "/v1/rooms/\(unknown)/membership", token: bo.token).status == .notFound)
            #expect(try await api.call(.get, "/v1/rooms/\(unknown)/messages", token: bo.token).status == .notFound)
            let badHead = api.head
            let blank = try await api.call(.post, "/v1/rooms", token: ana.token, json: ["name": "   "])
            #expect(blank.status == .unprocessableContent && blank.errorCode == "empty_text")
            let long = try await api.call(
                .post, "/v1/rooms", token: ana.token, json: ["name": String(repeating: "x", count: 101)])
            #expect(long.status == .unprocessableContent && long.errorCode == "text_too_long")
            #expect(try await api.call(.get, "/v1/rooms?scope=mine", token: ana.token).status == .badRequest)
            #expect(api.head == badHead)
        }
    }

    @Test(
        "room:{id} streams the room's messages and joins to members only, in order, resuming after Last-Event-ID once")
    func live() async throws {
        var options = APIFixture.options
        options.server.heartbeat = .milliseconds(300)
        try await withAPI(.live, options: options) { api in
            let ana = try await api.register("Ana")
            let bo = try await api.register("Bo")
            let room = try #require(
                try await api.call(.post, "/v1/rooms", token: ana.token, json: ["name": "Lobby"]).object["id"]
                    as? String)
            let outsider = try await api.call(.get, "/v1/live?topics=room:\(room)", token: bo.token)
            #expect(outsider.status == .forbidden)

            let start = try #require(try await api.call(.get, "/v1/rooms/\(room)", token: ana.token).position)
            _ = try await api.call(.put, "/v1/rooms/\(room)/membership", token: bo.token)
            for (user, text) in [(bo, "one"), (ana, "two"), (bo, "three")] {
                _ = try await api.call(.post, "/v1/rooms/\(room)/messages", token: user.token, json: ["text": text])
            }
            let port = try #require(api.client.port)
            func stream(after position: UInt64) async throws -> [LiveEvent] {
                let headers = ["Authorization": "Bearer \(ana.token)", "Last-Event-ID": "\(position)"]
                return try await BlockingWork.run {
                    let stream = try RawHTTPStream(port: port, path: "/v1/live?topics=room:\(room)", headers: headers)
                    guard stream.status == 200 else { throw StreamError("status \(stream.status)") }
                    return try stream.eventsUntilHeartbeat()
                }
            }
            let events = try await stream(after: start)
            #expect(events.map(\.name) == ["room", "message", "message", "message"])
            #expect(events[0].data["members"] as? Int == 2)
            #expect(events.dropFirst().map { $0.data["text"] as? String } == ["one", "two", "three"])
            #expect(events.dropFirst().allSatisfy { $0.data["roomId"] as? String == room })
            let resumed = try await stream(after: events[1].id)
            #expect(resumed.map(\.id) == events[2...].map(\.id))
        }
    }

    @Test("deleting an account leaves its rooms and blanks the text of its room messages")
    func accountDeletion() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let bo = try await api.register("Bo")
            let room = try #require(
                try await api.call(.post, "/v1/rooms", token: ana.token, json: ["name": "Lobby"]).object["id"]
                    as? String)
            _ = try await api.call(.put, "/v1/rooms/\(room)/membership", token: bo.token)
            _ = try await api.call(.post, "/v1/rooms/\(room)/messages", token: bo.token, json: ["text": "bye"])
            let deleted = try await api.call(.delete, "/v1/me", token: bo.token, json: ["password": "secret-password"])
            #expect(deleted.status == .accepted)

            #expect(try await api.call(.get, "/v1/rooms/\(room)", token: ana.token).object["members"] as? Int == 1)
            let messages = try await api.call(.get, "/v1/rooms/\(room)/messages", token: ana.token).items
            #expect(messages.count == 1 && messages[0]["text"] is NSNull)
        }
    }
}
