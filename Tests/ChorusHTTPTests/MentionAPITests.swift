import ChorusDelivery
import ChorusProcesses
import ChorusTestSupport
import Foundation
import HTTPTypes
import Testing

@Suite("API: mentions")
struct MentionAPITests {
    /// The handles of a post's or comment's `mentions`.
    private static func handles(_ object: [String: Any]) -> [String] {
        (object["mentions"] as? [[String: Any]] ?? []).compactMap { $0["handle"] as? String }
    }

    /// `user`'s notifications of kind `mention`: the post each is about, and the comment's text when in a comment.
    private static func mentions(of user: APIFixture.User, in api: APIFixture) async throws -> [(
        actor: String, post: String, comment: String?
    )] {
        let answer = try await api.call(.get, "/v1/notifications", token: user.token)
        return answer.items.filter { $0["type"] as? String == "mention" }.map { item in
            (
                (item["actor"] as? [String: Any])?["handle"] as? String ?? "",
                (item["post"] as? [String: Any])?["id"] as? String ?? "",
                (item["comment"] as? [String: Any])?["text"] as? String
            )
        }
    }

    @Test(
        "@handle in a post or comment mentions that account, resolved when written: a later change of handle keeps it; addresses, paths, unknown handles and blocked users mention no one"
    )
    func resolvedWhenWritten() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let bo = try await api.register("Bob")
            let cy = try await api.register("Cyd")
            let dee = try await api.register("Dee")
            _ = try await api.call(.put, "/v1/users/\(ana.id)/block", token: dee.token)

            let created = try await api.call(
                .post, "/v1/posts", token: ana.token,
                json: [
                    "caption": "with @CYD",
                    "text": "hi @Bob, @bob again, @nobody_here, mail cyd@cyd.example, /@cyd, @dee",
                ])
            #expect(created.status == .created, "\(created.object)")
            #expect(Self.handles(created.object) == ["cyd", "bob"], "the caption's first, each once")
            let post = try #require(created.object["id"] as? String)

            #expect(try await Self.mentions(of: bo, in: api).map(\.post) == [post])
            #expect(try await Self.mentions(of: cy, in: api).map(\.actor) == ["ana"])
            #expect(try await Self.mentions(of: dee, in: api).isEmpty, "never across a block")

            // Bo takes another handle, and someone else takes his old one: the post still mentions Bo.
            _ = try await api.call(.patch, "/v1/me", token: bo.token, json: ["handle": "bobby"])
            _ = try await api.call(.patch, "/v1/me", token: dee.token, json: ["handle": "bob"])
            let read = try await api.call(.get, "/v1/posts/\(post)", token: cy.token)
            #expect(Self.handles(read.object) == ["cyd", "bobby"])
            let feedPost = try await api.call(.get, "/v1/users/\(ana.id)/posts", token: cy.token).items.first
            #expect(Self.handles(feedPost ?? [:]) == ["cyd", "bobby"], "lists show them as a post does")

            // A comment mentions too; the post's author gets only the comment's own notification.
            let comment = try await api.call(
                .post, "/v1/posts/\(post)/comments", token: cy.token, json: ["text": "@bobby @ana look"])
            #expect(
                comment.status == .created && Self.handles(comment.object) == ["bobby", "ana"], "\(comment.object)")
            let comments = try await api.call(.get, "/v1/posts/\(post)/comments", token: bo.token)
            #expect(Self.handles(comments.items.first ?? [:]) == ["bobby", "ana"])
            #expect(try await Self.mentions(of: bo, in: api).map(\.comment) == ["@bobby @ana look", nil])
            let anas = try await api.call(.get, "/v1/notifications", token: ana.token).items
            #expect(anas.map { $0["type"] as? String } == ["comment"])

            // Seen by someone who blocked a mentioned user, the mention is left out.
            _ = try await api.call(.put, "/v1/users/\(cy.id)/block", token: bo.token)
            #expect(try await Self.handles(api.call(.get, "/v1/posts/\(post)", token: bo.token).object) == ["bobby"])
        }
    }

    @Test(
        "an edit notifies only those it mentions first and takes back the notification of those it no longer mentions; deleting takes back the rest"
    )
    func editsAndDeletions() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let bo = try await api.register("Bob")
            let cy = try await api.register("Cyd")
            let post = try await api.post(ana, "hello @bob")
            let comment = try await api.call(
                .post, "/v1/posts/\(post)/comments", token: cy.token, json: ["text": "@bob too"])
            let commentID = try #require(comment.object["id"] as? String)
            #expect(try await Self.mentions(of: bo, in: api).count == 2)

            // The caption changes, the text stays: Bo keeps his notification, Cy gets one.
            let captioned = try await api.call(
                .patch, "/v1/posts/\(post)", token: ana.token, json: ["caption": "for @cyd"])
            #expect(Self.handles(captioned.object) == ["cyd", "bob"], "\(captioned.object)")
            #expect(try await Self.mentions(of: bo, in: api).count == 2)
            #expect(try await Self.mentions(of: cy, in: api).count == 1)
            // The text no longer mentions Bo: his post notification goes, the comment's stays.
            let edited = try await api.call(.patch, "/v1/posts/\(post)", token: ana.token, json: ["text": "hello"])
            #expect(Self.handles(edited.object) == ["cyd"])
            #expect(try await Self.mentions(of: bo, in: api).map(\.comment) == ["@bob too"])
            // Mentioned again by an edit: notified again, at the edit.
            _ = try await api.call(.patch, "/v1/posts/\(post)", token: ana.token, json: ["text": "hello @BOB"])
            #expect(try await Self.mentions(of: bo, in: api).map(\.comment) == [nil, "@bob too"])

            _ = try await api.call(.delete, "/v1/posts/\(post)/comments/\(commentID)", token: cy.token)
            #expect(try await Self.mentions(of: bo, in: api).map(\.comment) == [nil])
            _ = try await api.call(.delete, "/v1/posts/\(post)", token: ana.token)
            #expect(try await Self.mentions(of: bo, in: api).isEmpty)
            #expect(try await Self.mentions(of: cy, in: api).isEmpty)
        }
    }

    @Test("replies: mentioned lets the users the post mentions comment, and no one else but its author")
    func mentionedMayReply() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let bo = try await api.register("Bob")
            let cy = try await api.register("Cyd")
            let created = try await api.call(
                .post, "/v1/posts", token: ana.token, json: ["text": "@bob what do you think?", "replies": "mentioned"])
            let post = try #require(created.object["id"] as? String)
            let comments = "/v1/posts/\(post)/comments"
            #expect(try await api.call(.post, comments, token: bo.token, json: ["text": "yes"]).status == .created)
            let head = api.head
            let refused = try await api.call(.post, comments, token: cy.token, json: ["text": "me?"])
            #expect(refused.status == .forbidden && refused.errorCode == "replies_restricted")
            #expect(api.head == head)
            // An edit that mentions Cy instead lets Cy in, and Bo no longer.
            _ = try await api.call(.patch, "/v1/posts/\(post)", token: ana.token, json: ["text": "@cyd then?"])
            #expect(try await api.call(.post, comments, token: cy.token, json: ["text": "me"]).status == .created)
            #expect(try await api.call(.post, comments, token: bo.token, json: ["text": "?"]).status == .forbidden)
        }
    }

    @Test("a mention reaches the mentioned user's live notifications and devices, as the `mentions` setting says")
    func liveAndPushed() async throws {
        try await withTemporaryDirectory { directory in
            try await withAPI(.live, in: directory + "/server") { api in
                let ana = try await api.register("Ana")
                let bo = try await api.register("Bob")
                let device = try await api.call(
                    .post, "/v1/me/devices", token: bo.token,
                    json: ["platform": "apns", "token": String(repeating: "b3", count: 32)])
                let boDevice = try #require(device.object["id"] as? String)
                let follower = try PushContentTests.Follower(api, in: directory)
                defer { follower.stop() }
                let after = try #require(try await api.call(.get, "/v1/notifications", token: bo.token).position)

                let post = try await api.post(ana, "hey @bob")
                _ = try await api.call(.patch, "/v1/me/push-settings", token: bo.token, json: ["mentions": "off"])
                _ = try await api.post(ana, "again @bob")
                // Mentioned in a comment on his own post, Bob is told once: of the comment.
                let bobs = try await api.post(bo, "my post")
                _ = try await api.call(.patch, "/v1/me/push-settings", token: bo.token, json: ["mentions": "all"])
                _ = try await api.call(.post, "/v1/posts/\(bobs)/comments", token: ana.token, json: ["text": "@bob hi"])

                let port = try #require(api.client.port)
                let headers = ["Authorization": "Bearer \(bo.token)", "Last-Event-ID": "\(after)"]
                let events = try await BlockingWork.run {
                    let stream = try RawHTTPStream(port: port, path: "/v1/live?topics=notifications", headers: headers)
                    guard stream.status == 200 else { throw StreamError("status \(stream.status)") }
                    return try (0..<2).map { _ in try stream.nextEvent() }
                }
                #expect(events.map(\.name) == ["notification", "notification"])
                #expect(events.map { $0.data["type"] as? String } == ["mention", "mention"])
                #expect((events[0].data["post"] as? [String: Any])?["id"] as? String == post)

                let pushes = try await follower.pushes()
                #expect(
                    pushes[boDevice]?.map(\.body) == ["Ana mentioned you", "Ana commented on your post"],
                    "none for the second post, after `mentions: off`")
                #expect(pushes[boDevice]?.first?.kind == .mention && pushes[boDevice]?.first?.postID == post)
            }
        }
    }
}
