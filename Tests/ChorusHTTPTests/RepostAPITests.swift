import Foundation
import Testing

@Suite("API: reposts")
struct RepostAPITests {
    @Test(
        "PUT and DELETE /v1/posts/{id}/repost toggle a plain repost; repeats change nothing; counts and hasReposted follow"
    )
    func toggle() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let bo = try await api.register("Bo")
            let post = try await api.post(ana, "worth sharing")
            let path = "/v1/posts/\(post)/repost"

            let first = try await api.call(.put, path, token: bo.token)
            #expect(first.status == .ok)
            #expect(first.object["reposted"] as? Bool == true && first.object["reposts"] as? Int == 1)
            let head = api.head
            let again = try await api.call(.put, path, token: bo.token)
            #expect(again.object["reposted"] as? Bool == true && again.object["reposts"] as? Int == 1)
            #expect(api.head == head, "a repeated repost appends nothing")

            let seenByBo = try await api.call(.get, "/v1/posts/\(post)", token: bo.token).object
            #expect(seenByBo["reposts"] as? Int == 1 && seenByBo["hasReposted"] as? Bool == true)
            #expect(seenByBo["repostedBy"] is NSNull, "a post read on its own is shown as posted")
            let seenByAna = try await api.call(.get, "/v1/posts/\(post)", token: ana.token).object
            #expect(seenByAna["reposts"] as? Int == 1 && seenByAna["hasReposted"] as? Bool == false)

            let undone = try await api.call(.delete, path, token: bo.token)
            #expect(undone.object["reposted"] as? Bool == false && undone.object["reposts"] as? Int == 0)
            let undoneAgain = try await api.call(.delete, path, token: bo.token)
            #expect(undoneAgain.status == .ok && undoneAgain.object["reposts"] as? Int == 0)

            #expect(
                try await api.call(.put, "/v1/posts/01HZZZZZZZZZZZZZZZZZZZZZZZ/repost", token: bo.token).status
                    == .notFound)
            _ = try await api.call(.delete, "/v1/posts/\(post)", token: ana.token)
            let gone = try await api.call(.put, path, token: bo.token)
            #expect(gone.status == .gone && gone.errorCode == "gone")
        }
    }

    @Test("a repost always points at the original: reposting or quoting a plain repost reposts or quotes its original")
    func alwaysTheOriginal() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let bo = try await api.register("Bo")
            let cy = try await api.register("Cy")
            let original = try await api.post(ana, "the original")
            // A plain repost made the v1 way: a post with nothing of its own.
            let plain = try #require(
                try await api.call(.post, "/v1/posts", token: bo.token, json: ["repostOf": original]).object["id"]
                    as? String)

            let reposted = try await api.call(.put, "/v1/posts/\(plain)/repost", token: cy.token)
            #expect(reposted.status == .ok && reposted.object["reposts"] as? Int == 1)
            let seen = try await api.call(.get, "/v1/posts/\(original)", token: cy.token).object
            #expect(seen["hasReposted"] as? Bool == true)

            let quote = try await api.call(
                .post, "/v1/posts", token: cy.token, json: ["repostOf": plain, "text": "so true"])
            #expect(quote.status == .created)
            let quoted = try #require(quote.object["repostOf"] as? [String: Any])
            #expect(quoted["id"] as? String == original && quoted["text"] as? String == "the original")
        }
    }

    @Test(
        "a plain repost shows in feeds and tabs as the original with repostedBy, once per list at its newest repost; un-reposting takes it out everywhere"
    )
    func feedsShowRepostsOnce() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let bo = try await api.register("Bo")
            let cy = try await api.register("Cy")
            let dee = try await api.register("Dee")
            for followee in [bo, cy] {
                #expect(try await api.call(.put, "/v1/users/\(followee.id)/follow", token: dee.token).status == .ok)
            }
            let post = try await api.post(ana, "ana's post")
            let later = try await api.post(cy, "cy's own post")

            /// The list's items as (id, repostedBy's id or nil).
            func items(_ path: String, token: String) async throws -> [(String, String?)] {
                let answer = try await api.call(.get, path, token: token)
                #expect(answer.status == .ok, "\(path): \(answer.status)")
                return answer.items.map { item in
                    (item["id"] as? String ?? "", (item["repostedBy"] as? [String: Any])?["id"] as? String)
                }
            }
            func expect(
                _ path: String, token: String, _ expected: [(String, String?)],
                sourceLocation: SourceLocation = #_sourceLocation
            ) async throws {
                let found = try await items(path, token: token)
                #expect(
                    found.map(\.0) == expected.map(\.0) && found.map(\.1) == expected.map(\.1),
                    "\(path): \(found) where \(expected) was expected", sourceLocation: sourceLocation)
            }

            #expect(try await api.call(.put, "/v1/posts/\(post)/repost", token: bo.token).status == .ok)
            try await expect("/v1/feed/following", token: dee.token, [(post, bo.id), (later, nil)])
            try await expect("/v1/feed/home", token: dee.token, [(post, bo.id), (later, nil)])
            try await expect("/v1/users/\(bo.id)/posts", token: dee.token, [(post, bo.id)])
            try await expect("/v1/users/\(bo.id)/posts?kind=reposts", token: dee.token, [(post, bo.id)])
            try await expect("/v1/users/\(bo.id)/posts?kind=original", token: dee.token, [])
            try await expect("/v1/users/\(ana.id)/posts", token: dee.token, [(post, nil)])
            let bosProfile = try await api.call(.get, "/v1/users/\(bo.id)", token: dee.token).object
            #expect(bosProfile["posts"] as? Int == 0, "a repost is not a post of one's own")

            // A second repost moves it up: still once per list, now by the newest reposter.
            #expect(try await api.call(.put, "/v1/posts/\(post)/repost", token: cy.token).status == .ok)
            try await expect("/v1/feed/following", token: dee.token, [(post, cy.id), (later, nil)])
            try await expect("/v1/feed/home", token: dee.token, [(post, cy.id), (later, nil)])
            // Bo follows no one: his feed shows it at his own repost.
            try await expect("/v1/feed/following", token: bo.token, [(post, bo.id)])
            let page = try await api.call(.get, "/v1/feed/following?limit=1", token: dee.token)
            let cursor = try #require(page.object["nextCursor"] as? String)
            try await expect("/v1/feed/following?limit=5&cursor=\(cursor)", token: dee.token, [(later, nil)])

            let notifications = try await api.call(.get, "/v1/notifications", token: ana.token).items
            #expect(notifications.map { $0["type"] as? String } == ["repost", "repost"])
            #expect(
                notifications.map { ($0["actor"] as? [String: Any])?["id"] as? String } == [cy.id, bo.id])
            #expect((notifications[0]["post"] as? [String: Any])?["id"] as? String == post)

            // Un-reposting goes back to the repost before it (Bo's, which came after Cy's own post), then to the post
            // as posted.
            #expect(try await api.call(.delete, "/v1/posts/\(post)/repost", token: cy.token).status == .ok)
            try await expect("/v1/feed/following", token: dee.token, [(post, bo.id), (later, nil)])
            try await expect("/v1/feed/home", token: dee.token, [(post, bo.id), (later, nil)])
            #expect(try await api.call(.delete, "/v1/posts/\(post)/repost", token: bo.token).status == .ok)
            try await expect("/v1/feed/following", token: dee.token, [(later, nil)])
            try await expect("/v1/feed/home", token: dee.token, [(later, nil), (post, nil)])
            try await expect("/v1/users/\(bo.id)/posts", token: dee.token, [])
            #expect(try await api.call(.get, "/v1/notifications", token: ana.token).items.isEmpty)

            // Deleting the original takes its reposts with it.
            #expect(try await api.call(.put, "/v1/posts/\(post)/repost", token: bo.token).status == .ok)
            #expect(try await api.call(.delete, "/v1/posts/\(post)", token: ana.token).status == .noContent)
            try await expect("/v1/feed/following", token: dee.token, [(later, nil)])
            try await expect("/v1/feed/home", token: dee.token, [(later, nil)])
            try await expect("/v1/users/\(bo.id)/posts", token: dee.token, [])
            #expect(try await api.call(.get, "/v1/notifications", token: ana.token).items.isEmpty)
        }
    }

    @Test("a follow back-fills the followee's reposts, an unfollow takes them out; a blocked user cannot repost")
    func followsAndBlocks() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let bo = try await api.register("Bo")
            let dee = try await api.register("Dee")
            let post = try await api.post(ana, "ana's post")
            #expect(try await api.call(.put, "/v1/posts/\(post)/repost", token: bo.token).status == .ok)

            _ = try await api.call(.put, "/v1/users/\(bo.id)/follow", token: dee.token)
            let filled = try await api.call(.get, "/v1/feed/following", token: dee.token).items
            #expect(filled.map { $0["id"] as? String } == [post])
            #expect((filled.first?["repostedBy"] as? [String: Any])?["id"] as? String == bo.id)
            _ = try await api.call(.delete, "/v1/users/\(bo.id)/follow", token: dee.token)
            #expect(try await api.call(.get, "/v1/feed/following", token: dee.token).items.isEmpty)

            _ = try await api.call(.put, "/v1/users/\(dee.id)/block", token: ana.token)
            let refused = try await api.call(.put, "/v1/posts/\(post)/repost", token: dee.token)
            #expect(refused.status == .forbidden && refused.errorCode == "blocked")
        }
    }

    @Test("deleting an account takes back its reposts: counts, feeds and the author's notifications")
    func accountDeletionTakesRepostsBack() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let bo = try await api.register("Bo")
            let post = try await api.post(ana, "ana's post")
            #expect(try await api.call(.put, "/v1/posts/\(post)/repost", token: bo.token).status == .ok)
            let deleted = try await api.call(
                .delete, "/v1/me", token: bo.token, json: ["password": "secret-password"])
            #expect(deleted.status == .accepted, "\(deleted.status) \(deleted.object)")

            let seen = try await api.call(.get, "/v1/posts/\(post)", token: ana.token).object
            #expect(seen["reposts"] as? Int == 0)
            let home = try await api.call(.get, "/v1/feed/home", token: ana.token).items
            #expect(home.map { $0["id"] as? String } == [post] && home.first?["repostedBy"] is NSNull)
            #expect(try await api.call(.get, "/v1/notifications", token: ana.token).items.isEmpty)
        }
    }
}
