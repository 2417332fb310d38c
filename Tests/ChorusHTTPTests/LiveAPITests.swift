import ChorusBackend
import ChorusHTTP
import ChorusProcesses
import ChorusTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@Suite("API: live streams")
struct LiveAPITests {
    @Test("a stream resumed after Last-Event-ID gets each later change on its topics exactly once, in log order")
    func resume() async throws {
        var options = APIFixture.options
        options.server.heartbeat = .milliseconds(300)
        try await withAPI(.live, options: options) { api in
            let ana = try await api.register("Ana")
            let bo = try await api.register("Bo")
            let post = try await api.post(ana, "ana's post")
            _ = try await api.call(.put, "/v1/users/\(bo.id)/follow", token: ana.token)
            let state = try await api.call(.get, "/v1/notifications", token: ana.token)
            let after = try #require(state.position)

            _ = try await api.call(.put, "/v1/posts/\(post)/like", token: bo.token)
            _ = try await api.call(.post, "/v1/posts/\(post)/comments", token: bo.token, json: ["text": "hi"])
            _ = try await api.call(.put, "/v1/users/\(ana.id)/follow", token: bo.token)
            _ = try await api.call(.post, "/v1/messages", token: bo.token, json: ["to": ana.id, "text": "hello"])
            _ = try await api.post(bo, "bo's post")
            _ = try await api.call(
                .post, "/v1/messages", token: bo.token,
                json: ["to": try await api.register("Cy").id, "text": "not for ana"])

            let port = try #require(api.client.port)
            let topics = "notifications,conversations,conversation:\(bo.id),post:\(post),feed"
            let headers = ["Authorization": "Bearer \(ana.token)", "Last-Event-ID": "\(after)"]
            let events = try await BlockingWork.run {
                let stream = try RawHTTPStream(port: port, path: "/v1/live?topics=\(topics)", headers: headers)
                guard stream.status == 200 else { throw StreamError("status \(stream.status)") }
                return try (0..<8).map { _ in try stream.nextEvent() }
            }
            #expect(
                events.map(\.name) == [
                    "like", "notification", "comment", "notification", "notification", "message", "conversation",
                    "post",
                ])
            #expect(events.allSatisfy { $0.id > after })
            #expect(zip(events, events.dropFirst()).allSatisfy { $0.id <= $1.id }, "in log order")
            #expect(events[0].data["likes"] as? Int == 1)
            #expect(events[2].data["text"] as? String == "hi")
            #expect(events[5].data["text"] as? String == "hello")
            #expect(events[7].data["text"] as? String == "bo's post")

            // Resuming after the comment's position (its comment and notification) gives what followed it, once.
            let resumeHeaders = ["Authorization": "Bearer \(ana.token)", "Last-Event-ID": "\(events[2].id)"]
            let again = try await BlockingWork.run {
                let resumed = try RawHTTPStream(port: port, path: "/v1/live?topics=\(topics)", headers: resumeHeaders)
                let names = try (0..<4).map { _ in try resumed.nextEvent().name }
                // Nothing else: the next thing on the stream is a heartbeat.
                guard try resumed.nextBlock() == ": heartbeat" else { throw StreamError("more events than expected") }
                return names
            }
            #expect(again == ["notification", "message", "conversation", "post"])
            #expect(events[2].id == events[3].id, "a comment on the caller's post: one position, two topics")
        }
    }

    @Test(
        "a stream handed more events at once than the server keeps for it reads them itself: each comes once, in order")
    func streamBehindTheHub() async throws {
        // One event kept for a stream: posts committed together, applied in one batch, are more than that.
        var options = APIFixture.options
        options.server.heartbeat = .milliseconds(300)
        options.server.liveBacklog = 1
        try await withAPI(.live, options: options) { api in
            let ana = try await api.register("Ana")
            let cy = try await api.register("Cy")
            #expect(try await api.call(.put, "/v1/users/\(cy.id)/follow", token: ana.token).status == .ok)
            let after = try #require(try await api.call(.get, "/v1/me", token: ana.token).position)
            let port = try #require(api.client.port)
            let headers = ["Authorization": "Bearer \(ana.token)", "Last-Event-ID": "\(after)"]
            let count = 40
            let reading = Task {
                try await BlockingWork.run {
                    let stream = try RawHTTPStream(port: port, path: "/v1/live?topics=feed", headers: headers)
                    return try stream.nextEvents(count)
                }
            }
            let posted = try await withThrowingTaskGroup(of: (UInt64, String).self) { group in
                for number in 0..<count {
                    group.addTask {
                        let answer = try await api.call(
                            .post, "/v1/posts", token: cy.token, json: ["text": "post \(number)"])
                        guard let position = answer.position, let id = answer.object["id"] as? String else {
                            throw StreamError("post \(number): \(answer.status)")
                        }
                        return (position, id)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }.sorted { $0.0 < $1.0 }
            }
            let events = try await reading.value
            #expect(events.map(\.id) == posted.map(\.0))
            #expect(events.map { $0.data["id"] as? String } == posted.map(\.1))
        }
    }

    @Test(
        "a deleted account's message, once sent live in plain, is never sent in plain again to a stream resumed before it"
    )
    func erasedMessages() async throws {
        var options = APIFixture.options
        options.server.heartbeat = .milliseconds(300)
        try await withAPI(.live, options: options) { api in
            let ana = try await api.register("Ana")
            let bo = try await api.register("Bo")
            let after = try #require(try await api.call(.get, "/v1/me", token: ana.token).position)
            _ = try await api.call(
                .post, "/v1/messages", token: bo.token, json: ["to": ana.id, "text": "secret words"])

            let port = try #require(api.client.port)
            let headers = ["Authorization": "Bearer \(ana.token)", "Last-Event-ID": "\(after)"]
            let path = "/v1/live?topics=conversation:\(bo.id)"
            let live = try await BlockingWork.run {
                let stream = try RawHTTPStream(port: port, path: path, headers: headers)
                return try stream.nextEvent()
            }
            #expect(live.data["text"] as? String == "secret words", "sent live before the deletion")

            let deleted = try await api.call(.delete, "/v1/me", token: bo.token, json: ["password": "secret-password"])
            #expect(deleted.status == .accepted)
            // Every stream decodes from one window of recent events: the deletion empties it, so the message is
            // decoded again, under a key that is gone.
            let blocks = try await BlockingWork.run {
                let stream = try RawHTTPStream(port: port, path: path, headers: headers)
                var blocks: [String] = []
                while case let block = try stream.nextBlock(), block != ": heartbeat" { blocks.append(block) }
                return blocks
            }
            #expect(!blocks.joined().contains("secret words"), "\(blocks)")
        }
    }

    @Test(
        "profile:{userId} sends the new profile when that user edits it, once each, and resumes after Last-Event-ID"
    )
    func profileEdits() async throws {
        var options = APIFixture.options
        options.server.heartbeat = .milliseconds(300)
        try await withAPI(.live, options: options) { api in
            let ana = try await api.register("Ana")
            let bo = try await api.register("Bo")
            let start = try #require(try await api.call(.get, "/v1/me", token: ana.token).position)
            _ = try await api.call(.patch, "/v1/me", token: ana.token, json: ["bio": "not Bo's"])
            _ = try await api.call(.patch, "/v1/me", token: bo.token, json: ["name": "Bo Kim"])
            _ = try await api.call(.patch, "/v1/me", token: bo.token, json: ["bio": "hello", "major": "Music"])

            let port = try #require(api.client.port)
            func stream(after position: UInt64, count: Int) async throws -> [LiveEvent] {
                let headers = ["Authorization": "Bearer \(ana.token)", "Last-Event-ID": "\(position)"]
                return try await BlockingWork.run {
                    let stream = try RawHTTPStream(
                        port: port, path: "/v1/live?topics=profile:\(bo.id)", headers: headers)
                    guard stream.status == 200 else { throw StreamError("status \(stream.status)") }
                    let events = try (0..<count).map { _ in try stream.nextEvent() }
                    guard events.allSatisfy({ $0.name == "profile" }) else {
                        throw StreamError("\(events.map(\.name))")
                    }
                    guard try stream.nextBlock() == ": heartbeat" else {
                        throw StreamError("more events than expected")
                    }
                    return events
                }
            }
            let edits = try await stream(after: start, count: 2)
            #expect(edits.map { $0.data["name"] as? String } == ["Bo Kim", "Bo Kim"])
            #expect(edits[1].data["bio"] as? String == "hello" && edits[1].data["major"] as? String == "Music")
            #expect(edits.allSatisfy { $0.data["id"] as? String == bo.id && $0.data["isMe"] as? Bool == false })
            let resumed = try await stream(after: edits[0].id, count: 1)
            #expect(resumed.map(\.id) == [edits[1].id])
        }
    }

    @Test(
        "feed sends a followed user's plain repost as the post with repostedBy, and post_removed when an unrepost or an unfollow takes a post out; post:{id} sends repost counts; each resumes after Last-Event-ID once"
    )
    func repostsAndRemovals() async throws {
        var options = APIFixture.options
        options.server.heartbeat = .milliseconds(300)
        try await withAPI(.live, options: options) { api in
            let ana = try await api.register("Ana")
            let bo = try await api.register("Bo")
            let dee = try await api.register("Dee")
            let post = try await api.post(ana, "ana's post")
            _ = try await api.call(.put, "/v1/users/\(bo.id)/follow", token: dee.token)
            let bosOwn = try await api.post(bo, "bo's own")
            let start = try #require(try await api.call(.get, "/v1/feed/following", token: dee.token).position)
            let port = try #require(api.client.port)
            let topics = "/v1/live?topics=feed,post:\(post)"
            func open(after position: UInt64) async throws -> RawHTTPStream {
                let headers = ["Authorization": "Bearer \(dee.token)", "Last-Event-ID": "\(position)"]
                return try await BlockingWork.run {
                    let stream = try RawHTTPStream(port: port, path: topics, headers: headers)
                    guard stream.status == 200 else { throw StreamError("status \(stream.status)") }
                    return stream
                }
            }
            let stream = try await open(after: start)
            /// Does `write`, then reads the two events it makes.
            func events(after write: () async throws -> Void) async throws -> [LiveEvent] {
                try await write()
                return try await BlockingWork.run { try stream.nextEvents(2) }
            }

            let reposted = try await events {
                _ = try await api.call(.put, "/v1/posts/\(post)/repost", token: bo.token)
            }
            #expect(reposted.map(\.name) == ["post", "repost"])
            #expect(reposted[0].data["id"] as? String == post)
            #expect((reposted[0].data["repostedBy"] as? [String: Any])?["id"] as? String == bo.id)
            #expect(reposted[1].data["postId"] as? String == post && reposted[1].data["reposts"] as? Int == 1)

            let unreposted = try await events {
                _ = try await api.call(.delete, "/v1/posts/\(post)/repost", token: bo.token)
            }
            #expect(unreposted.map(\.name) == ["post_removed", "repost"])
            #expect(unreposted[0].data["id"] as? String == post && unreposted[1].data["reposts"] as? Int == 0)

            let again = try await events { _ = try await api.call(.put, "/v1/posts/\(post)/repost", token: bo.token) }
            #expect(again.map(\.name) == ["post", "repost"])

            // The unfollow takes out both of Bo's, his repost and his own post, at one position.
            let unfollowed = try await events {
                _ = try await api.call(.delete, "/v1/users/\(bo.id)/follow", token: dee.token)
            }
            #expect(unfollowed.map(\.name) == ["post_removed", "post_removed"])
            #expect(Set(unfollowed.map { $0.data["id"] as? String }) == [post, bosOwn])
            #expect(unfollowed[0].id == unfollowed[1].id)

            // Resumed after the unrepost, a stream gets what followed once, as the read models show it now: Dee no
            // longer follows Bo, so the repost that came after is no post of hers.
            let resumed = try await open(after: unreposted[1].id)
            let later = try await BlockingWork.run { try resumed.eventsUntilHeartbeat() }
            #expect(later.map(\.name) == ["repost", "post_removed", "post_removed"])
            #expect(later.map(\.id) == [again[1].id] + unfollowed.map(\.id))
        }
    }

    @Test("feed sends post_removed for a blocked user's posts that a followed user's repost kept in the feed")
    func blockRemovesReposted() async throws {
        var options = APIFixture.options
        options.server.heartbeat = .milliseconds(300)
        try await withAPI(.live, options: options) { api in
            let ana = try await api.register("Ana")
            let bo = try await api.register("Bo")
            let dee = try await api.register("Dee")
            _ = try await api.call(.put, "/v1/users/\(bo.id)/follow", token: dee.token)
            let post = try await api.post(ana, "ana's post")
            _ = try await api.call(.put, "/v1/posts/\(post)/repost", token: bo.token)
            let start = try #require(try await api.call(.get, "/v1/feed/following", token: dee.token).position)
            #expect(try await api.call(.put, "/v1/users/\(ana.id)/block", token: dee.token).status == .ok)
            #expect(try await api.call(.get, "/v1/feed/following", token: dee.token).items.isEmpty)

            let port = try #require(api.client.port)
            let headers = ["Authorization": "Bearer \(dee.token)", "Last-Event-ID": "\(start)"]
            let events = try await BlockingWork.run {
                let stream = try RawHTTPStream(port: port, path: "/v1/live?topics=feed", headers: headers)
                return try stream.eventsUntilHeartbeat()
            }
            #expect(events.map(\.name) == ["post_removed"])
            #expect(events.first?.data["id"] as? String == post)
        }
    }

    @Test("idle streams get heartbeat comments; unknown topics are 400 and a stream needs a token")
    func heartbeatsAndRefusals() async throws {
        var options = APIFixture.options
        options.server.heartbeat = .milliseconds(100)
        try await withAPI(.live, options: options) { api in
            let ana = try await api.register("Ana")
            let port = try #require(api.client.port)
            let token = ana.token
            let blocks = try await BlockingWork.run {
                let stream = try RawHTTPStream(
                    port: port, path: "/v1/live?topics=feed", headers: ["Authorization": "Bearer \(token)"])
                return [try stream.nextBlock(), try stream.nextBlock()]
            }
            #expect(blocks == [": open", ": heartbeat"])
            #expect(try await api.call(.get, "/v1/live?topics=everything", token: ana.token).status == .badRequest)
            #expect(try await api.call(.get, "/v1/live", token: ana.token).status == .badRequest)
            #expect(try await api.call(.get, "/v1/live?topics=post:..%2Fx", token: ana.token).status == .badRequest)
            #expect(try await api.call(.get, "/v1/live?topics=feed").status == .unauthorized)
        }
    }
}
