import ChorusProcesses
import ChorusTestSupport
import Foundation
import HTTPTypes
import Testing

@Suite("API: muted words")
struct MutedWordAPITests {
    /// The ids of a page of posts.
    private static func ids(_ answer: APIFixture.Answer) -> [String] {
        answer.items.compactMap { $0["id"] as? String }
    }

    @Test(
        "a muted word or phrase leaves posts holding it out of the caller's feeds, hashtag pages and notifications, never their own; unmuting brings them back"
    )
    func hidesWhatHoldsIt() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let bob = try await api.register("Bob")
            _ = try await api.call(.put, "/v1/users/\(bob.id)/follow", token: ana.token)
            var muted: [String] = []
            for word in ["Spoiler", "game of thrones", "서울"] {
                let answer = try await api.call(.post, "/v1/me/muted-words", token: ana.token, json: ["word": word])
                #expect(answer.status == .created, "\(answer.object)")
                #expect(answer.object["word"] as? String == word && answer.object["scope"] as? String == "everyone")
                #expect(answer.object["expiresAt"] is NSNull)
                muted.append(try #require(answer.object["id"] as? String))
            }
            let hidden = [
                try await api.post(bob, "No SPOILER here"), try await api.post(bob, "#spoiler alert"),
                try await api.post(bob, "서울에서 만나요"), try await api.post(bob, "Game of Thrones tonight"),
            ]
            let shown = [
                try await api.post(bob, "spoilers and spoiled"), try await api.post(bob, "game and thrones"),
                try await api.post(ana, "my own spoiler"),
            ]
            let following = try await api.call(.get, "/v1/feed/following", token: ana.token)
            #expect(Set(Self.ids(following)) == Set(shown), "\(following.object)")
            let home = try await api.call(.get, "/v1/feed/home", token: ana.token)
            #expect(Set(Self.ids(home)).isDisjoint(with: hidden))
            let tag = try await api.call(.get, "/v1/hashtags/spoiler/posts", token: ana.token)
            #expect(Self.ids(tag).isEmpty)
            #expect(Self.ids(try await api.call(.get, "/v1/hashtags/spoiler/posts", token: bob.token)) == [hidden[1]])

            // A comment holding a muted word, or a mention in a post holding one, notifies no one who muted it.
            _ = try await api.call(
                .post, "/v1/posts/\(shown[2])/comments", token: bob.token, json: ["text": "spoiler!"])
            let mention = try await api.post(bob, "@ana spoiler ahead")
            _ = try await api.call(.post, "/v1/posts/\(shown[2])/comments", token: bob.token, json: ["text": "nice"])
            let notifications = try await api.call(.get, "/v1/notifications", token: ana.token)
            #expect(notifications.items.map { ($0["comment"] as? [String: Any])?["text"] as? String } == ["nice"])

            let listed = try await api.call(.get, "/v1/me/muted-words", token: ana.token)
            #expect(Self.ids(listed) == muted, "oldest first")
            #expect(try await api.call(.get, "/v1/me/muted-words", token: bob.token).items.isEmpty, "the caller's own")
            for id in muted {
                #expect(try await api.call(.delete, "/v1/me/muted-words/\(id)", token: ana.token).status == .noContent)
            }
            let again = try await api.call(.delete, "/v1/me/muted-words/\(muted[0])", token: ana.token)
            #expect(again.status == .notFound)
            let all = try await api.call(.get, "/v1/feed/following", token: ana.token)
            #expect(Set(Self.ids(all)) == Set(hidden + shown + [mention]))
        }
    }

    @Test("not_following hides only posts of users the caller does not follow; an expired word hides nothing")
    func scopeAndExpiry() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let bob = try await api.register("Bob")
            let dee = try await api.register("Dee")
            _ = try await api.call(.put, "/v1/users/\(bob.id)/follow", token: ana.token)
            _ = try await api.call(
                .post, "/v1/me/muted-words", token: ana.token, json: ["word": "election", "scope": "not_following"])
            let followed = try await api.post(bob, "#election news")
            _ = try await api.post(dee, "#election news from a stranger")
            let page = try await api.call(.get, "/v1/hashtags/election/posts", token: ana.token)
            #expect(Self.ids(page) == [followed])

            let expiry = Date().addingTimeInterval(5)
            let brief = try await api.call(
                .post, "/v1/me/muted-words", token: ana.token,
                json: ["word": "brief", "expiresAt": expiry.formatted(.iso8601)])
            #expect(brief.status == .created && brief.object["expiresAt"] is String, "\(brief.object)")
            let post = try await api.post(dee, "a brief note")
            let whileInForce = try await Self.ids(api.call(.get, "/v1/feed/home", token: ana.token))
            // Hidden while in force; a machine slow enough to answer after the expiry checks only the end.
            if Date() < expiry.addingTimeInterval(-1) { #expect(!whileInForce.contains(post)) }
            try await eventually("the word's expiry") {
                try await Self.ids(api.call(.get, "/v1/feed/home", token: ana.token)).contains(post)
            }
        }
    }

    @Test("a word empty, too long, without a letter or digit, a time past, an unknown scope, or a 101st are refused")
    func refusals() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let head = api.head
            for (body, code) in [
                (["word": ""], "empty_text"), (["word": String(repeating: "a", count: 101)], "text_too_long"),
                (["word": "!!!"], "invalid_field"), (["word": "x", "scope": "friends"], "invalid_field"),
                (["word": "x", "expiresAt": "2020-01-01T00:00:00.000Z"], "invalid_field"),
                (["word": "x", "expiresAt": "tomorrow"], "invalid_field"),
            ] {
                let answer = try await api.call(.post, "/v1/me/muted-words", token: ana.token, json: body)
                #expect(answer.status == .unprocessableContent && answer.errorCode == code, "\(body): \(answer.object)")
            }
            #expect(api.head == head, "refusals append nothing")
            for index in 0..<100 {
                let answer = try await api.call(
                    .post, "/v1/me/muted-words", token: ana.token, json: ["word": "word\(index)"])
                #expect(answer.status == .created)
            }
            let over = try await api.call(.post, "/v1/me/muted-words", token: ana.token, json: ["word": "one more"])
            #expect(over.status == .unprocessableContent && over.errorCode == "invalid_field", "\(over.object)")
        }
    }

    @Test("a live stream sends no post holding a muted word")
    func live() async throws {
        try await withAPI(.live) { api in
            let ana = try await api.register("Ana")
            let bob = try await api.register("Bob")
            _ = try await api.call(.put, "/v1/users/\(bob.id)/follow", token: ana.token)
            _ = try await api.call(.post, "/v1/me/muted-words", token: ana.token, json: ["word": "spoiler"])
            let after = try #require(try await api.call(.get, "/v1/feed/following", token: ana.token).position)
            _ = try await api.post(bob, "the spoiler")
            let clean = try await api.post(bob, "clean")
            let port = try #require(api.client.port)
            let headers = ["Authorization": "Bearer \(ana.token)", "Last-Event-ID": "\(after)"]
            let event = try await BlockingWork.run {
                let stream = try RawHTTPStream(port: port, path: "/v1/live?topics=feed", headers: headers)
                guard stream.status == 200 else { throw StreamError("status \(stream.status)") }
                return try stream.nextEvent()
            }
            #expect(event.name == "post" && event.data["id"] as? String == clean, "the muted post is passed over")
        }
    }
}
