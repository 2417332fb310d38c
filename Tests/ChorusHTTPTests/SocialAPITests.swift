import ChorusBackend
import ChorusHTTP
import Foundation
import HTTPTypes
import Testing

@Suite("API: the social app")
struct SocialAPITests {
    @Test("follow, feeds, likes, comments, notifications, tabs: each answer as openapi.yaml shapes it")
    func socialFlow() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let bo = try await api.register("Bo")
            let first = try await api.post(bo, "bo's first")

            let follow = try await api.call(.put, "/v1/users/\(bo.id)/follow", token: ana.token)
            #expect(
                follow.status == .ok && follow.object["following"] as? Bool == true
                    && follow.object["followers"] as? Int == 1)
            let again = try await api.call(.put, "/v1/users/\(bo.id)/follow", token: ana.token)
            #expect(
                again.object["followers"] as? Int == 1 && again.position == follow.position, "a repeat changes nothing")

            let second = try await api.post(bo, "bo's second")
            let feed = try await api.call(.get, "/v1/feed/following", token: ana.token)
            #expect(feed.items.map { $0["id"] as? String } == [second, first], "back-filled, newest first")
            #expect(feed.object.keys.contains("nextCursor"))
            let home = try await api.call(.get, "/v1/feed/home?limit=1", token: ana.token)
            #expect(home.items.count == 1 && home.object["nextCursor"] is String)

            let like = try await api.call(.put, "/v1/posts/\(second)/like", token: ana.token)
            #expect(like.object["liked"] as? Bool == true && like.object["likes"] as? Int == 1)
            let comment = try await api.call(
                .post, "/v1/posts/\(second)/comments", token: ana.token, json: ["text": " nice "])
            #expect(comment.status == .created && comment.object["text"] as? String == "nice")
            #expect(comment.object["postId"] as? String == second)
            #expect((comment.object["author"] as? [String: Any])?["id"] as? String == ana.id)
            let post = try await api.call(.get, "/v1/posts/\(second)", token: bo.token)
            #expect(post.object["likes"] as? Int == 1 && post.object["comments"] as? Int == 1)
            #expect(post.object["hasLiked"] as? Bool == false, "from Bo's point of view")
            #expect(post.object["repostOf"] is NSNull && post.object["image"] is NSNull)
            #expect(
                (post.object["createdAt"] as? String)?.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil)

            let notifications = try await api.call(.get, "/v1/notifications", token: bo.token)
            #expect(notifications.items.map { $0["type"] as? String } == ["comment", "like", "follow"])
            #expect(notifications.items.first?["actorIsFollowed"] as? Bool == false)
            #expect(((notifications.items.first?["comment"]) as? [String: Any])?["text"] as? String == "nice")
            #expect(
                try await api.call(.get, "/v1/notifications", token: ana.token).items.isEmpty, "never one's own acts")

            let unlike = try await api.call(.delete, "/v1/posts/\(second)/like", token: ana.token)
            #expect(unlike.object["liked"] as? Bool == false && unlike.object["likes"] as? Int == 0)
            let comments = try await api.call(.get, "/v1/posts/\(second)/comments?order=desc", token: bo.token)
            #expect(comments.items.count == 1)

            let followers = try await api.call(.get, "/v1/users/\(bo.id)/followers", token: bo.token)
            #expect(followers.items.map { $0["id"] as? String } == [ana.id])
            let posts = try await api.call(.get, "/v1/users/\(bo.id)/posts", token: ana.token)
            #expect(posts.items.count == 2)
            let profile = try await api.call(.get, "/v1/users/\(bo.id)", token: ana.token)
            #expect(profile.object["isFollowed"] as? Bool == true && profile.object["posts"] as? Int == 2)
            #expect(profile.object["email"] == nil, "only one's own profile shows the e-mail")

            let unfollow = try await api.call(.delete, "/v1/users/\(bo.id)/follow", token: ana.token)
            #expect(unfollow.object["following"] as? Bool == false && unfollow.object["followers"] as? Int == 0)
            #expect(try await api.call(.get, "/v1/feed/following", token: ana.token).items.isEmpty)
        }
    }

    @Test("messages and the recent-messages list; a conversation shows only the caller's own messages")
    func messages() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let bo = try await api.register("Bo")
            let cy = try await api.register("Cy")
            let sent = try await api.call(.post, "/v1/messages", token: ana.token, json: ["to": bo.id, "text": "안녕"])
            #expect(sent.status == .created && sent.object["text"] as? String == "안녕")
            #expect((sent.object["to"] as? [String: Any])?["id"] as? String == bo.id)
            _ = try await api.call(.post, "/v1/messages", token: cy.token, json: ["to": bo.id, "text": "hey"])
            _ = try await api.call(.post, "/v1/messages", token: bo.token, json: ["to": ana.id, "text": "hi ana"])

            let list = try await api.call(.get, "/v1/conversations", token: bo.token)
            #expect(list.items.map { ($0["partner"] as? [String: Any])?["id"] as? String } == [ana.id, cy.id])
            #expect((list.items.first?["lastMessage"] as? [String: Any])?["text"] as? String == "hi ana")
            let thread = try await api.call(.get, "/v1/conversations/\(bo.id)/messages", token: ana.token)
            #expect(thread.items.map { $0["text"] as? String } == ["hi ana", "안녕"])
            let ascending = try await api.call(.get, "/v1/conversations/\(bo.id)/messages?order=asc", token: ana.token)
            #expect(ascending.items.map { $0["text"] as? String } == ["안녕", "hi ana"])
            let outsider = try await api.call(.get, "/v1/conversations/\(bo.id)/messages", token: cy.token)
            #expect(outsider.items.map { $0["text"] as? String } == ["hey"], "Cy sees Cy's conversation with Bo only")
        }
    }

    @Test("a profile edit shows everywhere the user is embedded, from the position of the edit on")
    func profileEdit() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let bo = try await api.register("Bo")
            let post = try await api.post(ana, "hello")
            _ = try await api.call(.put, "/v1/users/\(ana.id)/follow", token: bo.token)
            _ = try await api.call(.put, "/v1/users/\(bo.id)/follow", token: ana.token)
            _ = try await api.call(.post, "/v1/posts/\(post)/comments", token: ana.token, json: ["text": "me again"])
            _ = try await api.call(.post, "/v1/messages", token: ana.token, json: ["to": bo.id, "text": "hi"])

            let edit = try await api.call(.patch, "/v1/me", token: ana.token, json: ["name": "Ana Kim", "major": "수학"])
            #expect(
                edit.status == .ok && edit.object["name"] as? String == "Ana Kim" && edit.object["bio"] as? String == ""
            )
            let position = try #require(edit.position)
            let headers = ["Chorus-Min-Position": String(position)]
            let names: [String?] = [
                (try await api.call(.get, "/v1/feed/home", token: bo.token, headers: headers).items.first?["author"]
                    as? [String: Any])?["name"] as? String,
                (try await api.call(.get, "/v1/posts/\(post)/comments", token: bo.token, headers: headers).items.first?[
                    "author"] as? [String: Any])?["name"] as? String,
                (try await api.call(.get, "/v1/notifications", token: bo.token, headers: headers).items.first?["actor"]
                    as? [String: Any])?["name"] as? String,
                (try await api.call(.get, "/v1/users/\(bo.id)/following", token: bo.token, headers: headers).items.first)?[
                    "name"] as? String,
                ((try await api.call(.get, "/v1/conversations", token: bo.token, headers: headers).items.first?[
                    "partner"]) as? [String: Any])?["name"] as? String,
            ]
            #expect(names == Array(repeating: "Ana Kim", count: names.count))
            let search = try await api.call(.get, "/v1/search/users?q=%EC%88%98%ED%95%99", token: bo.token)
            #expect(search.items.map { $0["id"] as? String } == [ana.id], "found by the new major, 수학")
        }
    }

    @Test("search: substring of name or major without regard to case, Hangul initials, never the caller")
    func search() async throws {
        try await withAPI { api in
            let kim = try await api.register("김민수")
            let min = try await api.register("Minji", major: "Physics")
            let caller = try await api.register("Mina")
            func ids(_ query: String) async throws -> [String?] {
                let escaped = query.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? query
                return try await api.call(.get, "/v1/search/users?q=\(escaped)", token: caller.token).items.map {
                    $0["id"] as? String
                }
            }
            #expect(try await ids("ㄱㅁㅅ") == [kim.id])
            #expect(try await ids("MIN") == [min.id], "Mina is the caller")
            #expect(try await ids("phys") == [min.id])
            #expect(try await ids("nobody").isEmpty)
        }
    }
}
