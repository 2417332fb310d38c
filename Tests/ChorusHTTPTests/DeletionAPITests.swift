import ChorusBackend
import ChorusHTTP
import ChorusProcesses
import ChorusTestSupport
import Foundation
import HTTPTypes
import Testing

@Suite("API: deleting posts and comments")
struct DeletionAPITests {
    @Test("a deleted post leaves every feed, tab, count and notification; its plain reposts go with it; a quote stays")
    func deletePost() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let bo = try await api.register("Bo")
            let cy = try await api.register("Cy")
            _ = try await api.call(.put, "/v1/users/\(ana.id)/follow", token: bo.token)
            _ = try await api.call(.put, "/v1/users/\(cy.id)/follow", token: bo.token)
            let kept = try await api.post(ana, "this one stays")
            let post = try await api.post(ana, "this one goes")
            _ = try await api.call(.put, "/v1/posts/\(post)/like", token: bo.token)
            _ = try await api.call(.post, "/v1/posts/\(post)/comments", token: bo.token, json: ["text": "nice"])
            let plain = try #require(
                try await api.call(.post, "/v1/posts", token: cy.token, json: ["repostOf": post]).object["id"]
                    as? String)
            let quote = try #require(
                try await api.call(.post, "/v1/posts", token: cy.token, json: ["repostOf": post, "text": "so true"])
                    .object["id"] as? String)
            #expect(try await api.call(.get, "/v1/notifications", token: ana.token).items.count == 3)

            let deleted = try await api.call(.delete, "/v1/posts/\(post)", token: ana.token)
            #expect(deleted.status == .noContent && deleted.bytes.isEmpty)
            let position = try #require(deleted.position)
            #expect(position == api.head.rawValue, "the last deletion's position: the plain repost's")

            // Gone from every list, for everyone.
            for (path, reader) in [
                ("/v1/feed/home", bo), ("/v1/feed/following", bo), ("/v1/feed/following", ana),
                ("/v1/users/\(ana.id)/posts", bo), ("/v1/users/\(bo.id)/likes", bo), ("/v1/users/\(cy.id)/posts", cy),
            ] {
                let ids = try await api.call(.get, path, token: reader.token).items.compactMap { $0["id"] as? String }
                #expect(!ids.contains(post) && !ids.contains(plain), "\(path): \(ids)")
            }
            let home = try await api.call(.get, "/v1/feed/home", token: bo.token).items
            #expect(home.compactMap { $0["id"] as? String } == [quote, kept])
            #expect(home.first?["text"] as? String == "so true")
            #expect(home.first?["repostOf"] is NSNull, "a quote keeps its words, not the deleted post")
            let notifications = try await api.call(.get, "/v1/notifications", token: ana.token).items
            #expect(notifications.map { $0["type"] as? String } == ["follow"], "bo's follow stays; like, comment go")
            let profile = try await api.call(.get, "/v1/users/\(ana.id)", token: bo.token).object
            #expect(profile["posts"] as? Int == 1)
            #expect(try await api.call(.get, "/v1/users/\(cy.id)", token: cy.token).object["posts"] as? Int == 1)

            // Its own routes: reads find nothing, writes hear that it was deleted, the author may delete again.
            #expect(try await api.call(.get, "/v1/posts/\(post)", token: bo.token).status == .notFound)
            #expect(try await api.call(.get, "/v1/posts/\(plain)", token: bo.token).status == .notFound)
            #expect(try await api.call(.get, "/v1/posts/\(post)/comments", token: bo.token).status == .notFound)
            let head = api.head
            let writes: [(HTTPRequest.Method, String, [String: Any]?)] = [
                (.patch, "/v1/posts/\(post)", ["text": "back"]), (.put, "/v1/posts/\(post)/like", nil),
                (.delete, "/v1/posts/\(post)/like", nil), (.post, "/v1/posts/\(post)/comments", ["text": "hello?"]),
            ]
            for (method, path, json) in writes {
                let answer = try await api.call(method, path, token: bo.token, json: json)
                #expect(answer.status == .gone && answer.errorCode == "gone", "\(method) \(path): \(answer.status)")
            }
            let reposted = try await api.call(.post, "/v1/posts", token: bo.token, json: ["repostOf": post])
            #expect(reposted.status == .unprocessableContent && reposted.errorCode == "unknown_post")
            let again = try await api.call(.delete, "/v1/posts/\(post)", token: ana.token)
            #expect(again.status == .noContent)
            #expect(api.head == head, "refusals and a repeated delete append nothing")
        }
    }

    @Test("only its author deletes a post; an unknown one is 404")
    func deletePostRefusals() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let bo = try await api.register("Bo")
            let post = try await api.post(ana, "mine")
            let head = api.head
            let other = try await api.call(.delete, "/v1/posts/\(post)", token: bo.token)
            #expect(other.status == .forbidden && other.errorCode == "forbidden")
            let unknown = try await api.call(.delete, "/v1/posts/01m81svpp4e00a142xd0fmjp8z", token: ana.token)
            #expect(unknown.status == .notFound && unknown.errorCode == "not_found")
            #expect(try await api.call(.delete, "/v1/posts/not-an-id", token: ana.token).status == .notFound)
            #expect(try await api.call(.delete, "/v1/posts/\(post)").status == .unauthorized)
            #expect(api.head == head)
            #expect(try await api.call(.get, "/v1/posts/\(post)", token: bo.token).status == .ok)
        }
    }

    @Test("a comment is deleted by its author or the post's author: it, its notification and its count go")
    func deleteComment() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let bo = try await api.register("Bo")
            let cy = try await api.register("Cy")
            let post = try await api.post(ana, "comment on this")
            func comment(_ user: APIFixture.User, _ text: String) async throws -> String {
                let answer = try await api.call(
                    .post, "/v1/posts/\(post)/comments", token: user.token, json: ["text": text])
                return try #require(answer.object["id"] as? String)
            }
            let bos = try await comment(bo, "by bo")
            let cys = try await comment(cy, "by cy")
            let third = try await comment(cy, "cy again")
            let head = api.head

            let stranger = try await api.call(.delete, "/v1/posts/\(post)/comments/\(cys)", token: bo.token)
            #expect(stranger.status == .forbidden && stranger.errorCode == "forbidden")
            let other = try await api.post(bo, "another post")
            let elsewhere = try await api.call(.delete, "/v1/posts/\(other)/comments/\(bos)", token: bo.token)
            #expect(elsewhere.status == .notFound, "a comment is deleted under its own post")
            let unknown = try await api.call(
                .delete, "/v1/posts/\(post)/comments/01m81svpp4e00a142xd0fmjp8z", token: bo.token)
            #expect(unknown.status == .notFound && unknown.errorCode == "not_found")
            #expect(api.head.rawValue == head.rawValue + 1, "only the other post was appended")

            #expect(
                try await api.call(.delete, "/v1/posts/\(post)/comments/\(bos)", token: bo.token).status == .noContent)
            #expect(
                try await api.call(.delete, "/v1/posts/\(post)/comments/\(cys)", token: ana.token).status == .noContent)
            let repeated = try await api.call(.delete, "/v1/posts/\(post)/comments/\(cys)", token: cy.token)
            #expect(repeated.status == .noContent)

            let left = try await api.call(.get, "/v1/posts/\(post)/comments", token: bo.token).items
            #expect(left.compactMap { $0["id"] as? String } == [third])
            #expect(try await api.call(.get, "/v1/posts/\(post)", token: bo.token).object["comments"] as? Int == 1)
            let notifications = try await api.call(.get, "/v1/notifications", token: ana.token).items
            #expect(notifications.compactMap { ($0["comment"] as? [String: Any])?["id"] as? String } == [third])
        }
    }

    @Test("the feed topic sends post_removed and a post topic comment_removed, and a resumed stream sends them once")
    func liveRemovals() async throws {
        var options = APIFixture.options
        options.server.heartbeat = .milliseconds(300)
        try await withAPI(.live, options: options) { api in
            let ana = try await api.register("Ana")
            let bo = try await api.register("Bo")
            _ = try await api.call(.put, "/v1/users/\(ana.id)/follow", token: bo.token)
            let post = try await api.post(ana, "soon gone")
            let comment = try #require(
                try await api.call(.post, "/v1/posts/\(post)/comments", token: bo.token, json: ["text": "hm"])
                    .object["id"] as? String)
            let after = try #require(try await api.call(.get, "/v1/feed/following", token: bo.token).position)
            _ = try await api.call(.delete, "/v1/posts/\(post)/comments/\(comment)", token: bo.token)
            _ = try await api.call(.delete, "/v1/posts/\(post)", token: ana.token)

            let port = try #require(api.client.port)
            let headers = ["Authorization": "Bearer \(bo.token)", "Last-Event-ID": "\(after)"]
            let events = try await BlockingWork.run {
                let stream = try RawHTTPStream(
                    port: port, path: "/v1/live?topics=feed,post:\(post)", headers: headers)
                guard stream.status == 200 else { throw StreamError("status \(stream.status)") }
                let events = try (0..<2).map { _ in try stream.nextEvent() }
                guard try stream.nextBlock() == ": heartbeat" else { throw StreamError("more events than expected") }
                return events
            }
            #expect(events.map(\.name) == ["comment_removed", "post_removed"])
            #expect(events[0].data["id"] as? String == comment && events[0].data["postId"] as? String == post)
            #expect(events[1].data["id"] as? String == post)
        }
    }
}
