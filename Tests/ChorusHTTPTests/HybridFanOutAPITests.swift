import ChorusHTTP
import ChorusProcesses
import ChorusTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@Suite("API: hybrid fan-out")
struct HybridFanOutAPITests {
    @Test(
        "posts of an author past the fan-out limit reach followers' feeds, pages, cursors and live streams alike, both ways across it"
    )
    func acrossTheLimit() async throws {
        var options = APIFixture.options
        options.fanOutLimit = 2
        options.server.heartbeat = .milliseconds(300)
        try await withAPI(.live, options: options) { api in
            let (ana, bo, cy) = (
                try await api.register("Ana"), try await api.register("Bo"), try await api.register("Cy")
            )
            _ = try await api.call(.put, "/v1/users/\(ana.id)/follow", token: bo.token)
            let before = try await api.post(ana, "to one follower")
            let start = try #require(try await api.call(.put, "/v1/users/\(ana.id)/follow", token: cy.token).position)

            // Two followers: held back, and merged into both feeds as soon as the post's position is applied.
            let posted = try await api.call(.post, "/v1/posts", token: ana.token, json: ["text": "to two followers"])
            let held = try #require(posted.object["id"] as? String)
            let position = try #require(posted.position)
            for reader in [bo, cy, ana] {
                let feed = try await api.call(
                    .get, "/v1/feed/following?limit=1", token: reader.token,
                    headers: ["Chorus-Min-Position": "\(position)"])
                #expect(feed.status == .ok)
                #expect(feed.items.map { $0["id"] as? String } == [held], "the newest of \(reader.id)'s feed")
                #expect(try #require(feed.position) >= position)
                // The cursor goes on to the fanned-out post below it.
                let cursor = try #require(feed.object["nextCursor"] as? String)
                let next = try await api.call(.get, "/v1/feed/following?limit=5&cursor=\(cursor)", token: reader.token)
                #expect(next.items.map { $0["id"] as? String } == [before])
            }

            // Below the limit again: Cy unfollows, Ana's next post is fanned out to Bo; Cy sees neither.
            _ = try await api.call(.delete, "/v1/users/\(ana.id)/follow", token: cy.token)
            let fanned = try await api.post(ana, "to one follower again")
            let bos = try await api.call(
                .get, "/v1/feed/following", token: bo.token, headers: ["Chorus-Min-Position": "\(api.head.rawValue)"])
            #expect(bos.items.map { $0["id"] as? String } == [fanned, held, before])
            let cys = try await api.call(.get, "/v1/feed/following", token: cy.token)
            #expect(cys.items.isEmpty)
            // One post of the three was held back, and went into no feed.
            let tables = try dumpReadModels(api.backend.projections.store)
            #expect(tables["held-back-posts"]?.count == 1)
            #expect(tables["feed-merges"]?.count == 2, "Ana's own feed and Bo's merge hers")

            // Bo's stream since Cy's follow: both of Ana's later posts, as `post` events, in log order.
            let port = try #require(api.client.port)
            let headers = ["Authorization": "Bearer \(bo.token)", "Last-Event-ID": "\(start)"]
            let events = try await BlockingWork.run {
                let stream = try RawHTTPStream(port: port, path: "/v1/live?topics=feed", headers: headers)
                guard stream.status == 200 else { throw StreamError("status \(stream.status)") }
                return try (0..<2).map { _ in try stream.nextEvent() }
            }
            #expect(events.map(\.name) == ["post", "post"])
            #expect(events.map { $0.data["id"] as? String } == [held, fanned])
        }
    }
}
