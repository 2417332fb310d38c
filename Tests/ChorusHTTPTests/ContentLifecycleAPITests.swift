import ChorusBackend
import ChorusHTTP
import Foundation
import HTTPTypes
import Testing

@Suite("API: editing posts")
struct ContentLifecycleAPITests {
    @Test("an edit changes the caption and text everywhere the post shows, sets editedAt, and leaves the rest")
    func editShowsEverywhere() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let bo = try await api.register("Bo")
            _ = try await api.call(.put, "/v1/users/\(ana.id)/follow", token: bo.token)
            let created = try await api.call(
                .post, "/v1/posts", token: ana.token, json: ["caption": "first caption", "text": "teh typo"])
            let post = try #require(created.object["id"] as? String)
            #expect(created.object["editedAt"] is NSNull, "a new post was never edited")
            _ = try await api.call(.put, "/v1/posts/\(post)/like", token: bo.token)

            let edit = try await api.call(.patch, "/v1/posts/\(post)", token: ana.token, json: ["text": " the fix "])
            #expect(edit.status == .ok)
            #expect(edit.object["text"] as? String == "the fix", "trimmed like a new post")
            #expect(edit.object["caption"] as? String == "first caption", "an absent field stays")
            #expect(edit.object["likes"] as? Int == 1)
            let editedAt = try #require(edit.object["editedAt"] as? String)
            #expect(editedAt.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil)
            #expect(editedAt >= (created.object["createdAt"] as? String ?? ""))

            // Every read from the edit's position on shows the edited post.
            let reads = [
                "/v1/posts/\(post)", "/v1/feed/home", "/v1/feed/following", "/v1/users/\(ana.id)/posts",
                "/v1/users/\(bo.id)/likes",
            ]
            for path in reads {
                let answer = try await api.call(.get, path, token: bo.token)
                let shown = answer.items.first ?? answer.object
                #expect(shown["id"] as? String == post, "\(path)")
                #expect(shown["text"] as? String == "the fix", "\(path)")
                #expect(shown["editedAt"] as? String == editedAt, "\(path)")
            }

            let caption = try await api.call(.patch, "/v1/posts/\(post)", token: ana.token, json: ["caption": ""])
            #expect(caption.object["caption"] as? String == "" && caption.object["text"] as? String == "the fix")
        }
    }

    @Test("a post keeps text, an image or a reposted post; an empty or unknown edit is refused and appends nothing")
    func editRefusals() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let textOnly = try await api.post(ana, "only words")
            let media = try await api.uploadImage(ana)
            let photo = try await api.call(
                .post, "/v1/posts", token: ana.token, json: ["image": media, "text": "a caption-like text"])
            let photoID = try #require(photo.object["id"] as? String)
            let head = api.head

            let cases: [(String, [String: Any], HTTPResponse.Status, String)] = [
                ("/v1/posts/\(textOnly)", ["text": "   "], .unprocessableContent, "empty_text"),
                ("/v1/posts/\(textOnly)", [:], .unprocessableContent, "invalid_field"),
                (
                    "/v1/posts/\(textOnly)", ["caption": NSNull(), "text": NSNull()], .unprocessableContent,
                    "invalid_field"
                ),
                (
                    "/v1/posts/\(textOnly)", ["text": String(repeating: "a", count: 281)], .unprocessableContent,
                    "text_too_long"
                ),
                ("/v1/posts/\(textOnly)", ["text": 5], .badRequest, "bad_request"),
                ("/v1/posts/01m81svpp4e00a142xd0fmjp8z", ["text": "x"], .notFound, "not_found"),
                ("/v1/posts/not-an-id", ["text": "x"], .notFound, "not_found"),
            ]
            for (path, json, status, code) in cases {
                let answer = try await api.call(.patch, path, token: ana.token, json: json)
                #expect(answer.status == status && answer.errorCode == code, "\(path) \(json): \(answer.status)")
            }
            #expect(api.head == head, "no refused edit appends anything")

            let emptied = try await api.call(.patch, "/v1/posts/\(photoID)", token: ana.token, json: ["text": ""])
            #expect(emptied.status == .ok && emptied.object["text"] as? String == "", "a photo needs no text")
        }
    }

    @Test("an edit retried with its Idempotency-Key gets the first answer and appends nothing")
    func idempotentEdit() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let post = try await api.post(ana, "draft")
            let first = try await api.call(
                .patch, "/v1/posts/\(post)", token: ana.token, json: ["text": "final"],
                headers: ["Idempotency-Key": "edit-1"])
            let head = api.head
            let retry = try await api.call(
                .patch, "/v1/posts/\(post)", token: ana.token, json: ["text": "final"],
                headers: ["Idempotency-Key": "edit-1"])
            #expect(retry.status == .ok && retry.bytes == first.bytes && retry.position == first.position)
            #expect(api.head == head)
            let other = try await api.call(
                .patch, "/v1/posts/\(post)", token: ana.token, json: ["text": "another"],
                headers: ["Idempotency-Key": "edit-1"])
            #expect(other.status == .conflict && other.errorCode == "idempotency_conflict")
        }
    }
}
