import ChorusTestSupport
import Foundation
import HTTPTypes
import Testing

@Suite("API: bookmarks")
struct BookmarkAPITests {
    @Test("a bookmark is its saver's alone: saved once, listed newest first in pages, shown on the post, taken back")
    func saveAndTakeBack() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let bo = try await api.register("Bo")
            let first = try await api.post(bo, "first")
            let second = try await api.post(bo, "second")

            let saved = try await api.call(.put, "/v1/posts/\(first)/bookmark", token: ana.token)
            #expect(saved.status == .ok, "\(saved.object)")
            #expect(saved.object as NSDictionary == ["bookmarked": true])
            let head = api.head
            let again = try await api.call(.put, "/v1/posts/\(first)/bookmark", token: ana.token)
            #expect(again.object["bookmarked"] as? Bool == true)
            #expect(api.head == head, "a repeat appends nothing")
            _ = try await api.call(.put, "/v1/posts/\(second)/bookmark", token: ana.token)

            let listed = try await api.call(.get, "/v1/me/bookmarks", token: ana.token)
            #expect(listed.status == .ok)
            #expect(listed.items.compactMap { $0["id"] as? String } == [second, first], "newest bookmark first")
            #expect(listed.items.allSatisfy { $0["hasBookmarked"] as? Bool == true })
            let page = try await api.call(.get, "/v1/me/bookmarks?limit=1", token: ana.token)
            #expect(page.items.compactMap { $0["id"] as? String } == [second])
            let cursor = try #require(page.object["nextCursor"] as? String)
            let next = try await api.call(.get, "/v1/me/bookmarks?limit=1&cursor=\(cursor)", token: ana.token)
            #expect(next.items.compactMap { $0["id"] as? String } == [first])

            // Only the saver sees it: on the post, in the feed, in a list of bookmarks.
            let asAna = try await api.call(.get, "/v1/posts/\(first)", token: ana.token)
            #expect(asAna.object["hasBookmarked"] as? Bool == true)
            let asBo = try await api.call(.get, "/v1/posts/\(first)", token: bo.token)
            #expect(asBo.object["hasBookmarked"] as? Bool == false)
            #expect(try await api.call(.get, "/v1/me/bookmarks", token: bo.token).items.isEmpty)
            let feed = try await api.call(.get, "/v1/feed/home", token: ana.token)
            #expect(feed.items.map { $0["hasBookmarked"] as? Bool } == [true, true])
            let bosNotifications = try await api.call(.get, "/v1/notifications", token: bo.token)
            #expect(bosNotifications.items.isEmpty, "a bookmark tells its post's author nothing")

            let taken = try await api.call(.delete, "/v1/posts/\(first)/bookmark", token: ana.token)
            #expect(taken.status == .ok)
            #expect(taken.object["bookmarked"] as? Bool == false)
            let afterTaking = api.head
            #expect(try await api.call(.delete, "/v1/posts/\(first)/bookmark", token: ana.token).status == .ok)
            #expect(api.head == afterTaking, "a repeat appends nothing")
            let left = try await api.call(.get, "/v1/me/bookmarks", token: ana.token)
            #expect(left.items.compactMap { $0["id"] as? String } == [second])
            let unsaved = try await api.call(.get, "/v1/posts/\(first)", token: ana.token)
            #expect(unsaved.object["hasBookmarked"] as? Bool == false)
        }
    }

    @Test(
        "a bookmark drops out while its post is unreadable (deleted, its author blocked) and is back after an unblock; refusals append nothing"
    )
    func unreadable() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let bo = try await api.register("Bo")
            let gone = try await api.post(bo, "soon deleted")
            let kept = try await api.post(bo, "kept")
            _ = try await api.call(.put, "/v1/posts/\(gone)/bookmark", token: ana.token)
            _ = try await api.call(.put, "/v1/posts/\(kept)/bookmark", token: ana.token)

            #expect(try await api.call(.delete, "/v1/posts/\(gone)", token: bo.token).status == .noContent)
            var listed = try await api.call(.get, "/v1/me/bookmarks", token: ana.token)
            #expect(listed.items.compactMap { $0["id"] as? String } == [kept])
            // The bookmark of a deleted post can still be cleared away.
            let cleared = try await api.call(.delete, "/v1/posts/\(gone)/bookmark", token: ana.token)
            #expect(cleared.status == .ok && cleared.object["bookmarked"] as? Bool == false)

            #expect(try await api.call(.put, "/v1/users/\(bo.id)/block", token: ana.token).status == .ok)
            listed = try await api.call(.get, "/v1/me/bookmarks", token: ana.token)
            #expect(listed.items.isEmpty, "a blocked author's post drops out")
            let head = api.head
            let refused = try await api.call(.put, "/v1/posts/\(kept)/bookmark", token: ana.token)
            #expect(refused.status == .forbidden && refused.errorCode == "blocked", "\(refused.object)")
            let missing = try await api.call(.put, "/v1/posts/\(gone)/bookmark", token: ana.token)
            #expect(missing.status == .gone, "\(missing.object)")
            let unknown = try await api.call(.delete, "/v1/posts/nothing-here/bookmark", token: ana.token)
            #expect(unknown.status == .notFound, "\(unknown.object)")
            let anonymous = try await api.call(.put, "/v1/posts/\(kept)/bookmark")
            #expect(anonymous.status == .unauthorized)
            #expect(api.head == head, "refusals append nothing")

            #expect(try await api.call(.delete, "/v1/users/\(bo.id)/block", token: ana.token).status == .ok)
            listed = try await api.call(.get, "/v1/me/bookmarks", token: ana.token)
            #expect(listed.items.compactMap { $0["id"] as? String } == [kept], "back where it was")
        }
    }
}
