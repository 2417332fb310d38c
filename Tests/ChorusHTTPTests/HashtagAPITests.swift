import ChorusProcesses
import ChorusTestSupport
import Foundation
import HTTPTypes
import Testing

@Suite("API: hashtags")
struct HashtagAPITests {
    @Test(
        "tags of any script, folded, page their posts newest first; edits move posts in and out, deletions out; search counts them"
    )
    func pagesAndSearch() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let bo = try await api.register("Bo")
            let swift = try await api.call(
                .post, "/v1/posts", token: ana.token, json: ["text": "Learning #Swift and #서울 today #swift"])
            #expect(swift.object["hashtags"] as? [String] == ["swift", "서울"], "\(swift.object)")
            let first = try #require(swift.object["id"] as? String)
            // Not tags: digits alone, a `#` inside a word, a URL's fragment; a caption's tag is one.
            let none = try await api.call(
                .post, "/v1/posts", token: bo.token,
                json: [
                    "text": "#123 a#b https://example.com/page#part https://example.com/#top", "caption": "#SWIFT_ui",
                ])
            #expect(none.object["hashtags"] as? [String] == ["swift_ui"], "\(none.object)")
            // The same tag decomposed (NFD): one with its composed form.
            let decomposed = "#" + "서울".decomposedStringWithCanonicalMapping
            let second = try await api.post(bo, "Back in \(decomposed) and #SWIFT")

            func page(_ tag: String, _ query: String = "") async throws -> [String] {
                let answer = try await api.call(.get, "/v1/hashtags/\(tag)/posts\(query)", token: ana.token)
                #expect(answer.status == .ok, "\(tag): \(answer.object)")
                return answer.items.compactMap { $0["id"] as? String }
            }
            #expect(try await page("swift") == [second, first], "newest first, any case")
            #expect(try await page("SWIFT") == [second, first])
            let seoul = "서울".addingPercentEncoding(withAllowedCharacters: .urlPathAllowed)!
            #expect(try await page(seoul) == [second, first], "Korean, composed or not")
            #expect(try await page("swift", "?limit=1").count == 1)
            let bad = try await api.call(.get, "/v1/hashtags/123/posts", token: ana.token)
            #expect(bad.status == .badRequest, "digits alone are no tag")

            let searched = try await api.call(.get, "/v1/search/hashtags?q=%23sw", token: ana.token)
            let hits = searched.items.map { "\($0["tag"] as? String ?? "") \($0["posts"] as? Int ?? -1)" }
            #expect(hits == ["swift 2", "swift_ui 1"], "most used first")

            // An edit takes the post out of one tag and into another, at its place; a deletion out of all.
            let edited = try await api.call(
                .patch, "/v1/posts/\(first)", token: ana.token, json: ["text": "Learning #Rust today"])
            #expect(edited.object["hashtags"] as? [String] == ["rust"])
            #expect(try await page("swift") == [second])
            #expect(try await page("rust") == [first])
            #expect(try await api.call(.delete, "/v1/posts/\(second)", token: bo.token).status == .noContent)
            #expect(try await page("swift").isEmpty)
            let after = try await api.call(.get, "/v1/search/hashtags?q=s", token: ana.token)
            #expect(
                after.items.map { "\($0["tag"] as? String ?? "") \($0["posts"] as? Int ?? -1)" } == ["swift_ui 1"],
                "a tag no post holds is gone")

            // Hidden from whom its author blocked.
            _ = try await api.call(.put, "/v1/users/\(ana.id)/block", token: bo.token)
            let blocked = try await api.call(.get, "/v1/hashtags/rust/posts", token: bo.token)
            #expect(blocked.items.isEmpty)
        }
    }

    @Test(
        "the hashtag:{tag} live topic sends each new post holding the tag once, never a hidden author's, and resumes after Last-Event-ID"
    )
    func liveTopic() async throws {
        try await withAPI(.live) { api in
            let ana = try await api.register("Ana")
            let bo = try await api.register("Bo")
            let cy = try await api.register("Cy")
            let dee = try await api.register("Dee")
            _ = try await api.call(.put, "/v1/users/\(bo.id)/follow", token: ana.token)
            _ = try await api.call(.put, "/v1/users/\(cy.id)/block", token: ana.token)
            let after = try #require(try await api.call(.get, "/v1/hashtags/swift/posts", token: ana.token).position)

            let followed = try await api.post(bo, "#Swift from someone Ana follows")
            _ = try await api.post(dee, "#rust is another tag")
            _ = try await api.post(cy, "#swift from someone Ana blocked")
            let stranger = try await api.post(dee, "a stranger's #SWIFT")

            let port = try #require(api.client.port)
            let path = "/v1/live?topics=feed,hashtag:%23Swift"
            func stream(after position: UInt64, events: Int) async throws -> [LiveEvent] {
                let headers = ["Authorization": "Bearer \(ana.token)", "Last-Event-ID": "\(position)"]
                return try await BlockingWork.run {
                    let stream = try RawHTTPStream(port: port, path: path, headers: headers)
                    guard stream.status == 200 else { throw StreamError("status \(stream.status)") }
                    return try (0..<events).map { _ in try stream.nextEvent() }
                }
            }
            // In log order: the followed user's post once (the feed's), the blocked user's and the other tag's not.
            let events = try await stream(after: after, events: 2)
            #expect(events.map(\.name) == ["post", "post"])
            #expect(events.map { $0.data["id"] as? String } == [followed, stranger])
            #expect(events[1].data["hashtags"] as? [String] == ["swift"])
            let resumed = try await stream(after: events[0].id, events: 1)
            #expect(resumed.map { $0.data["id"] as? String } == [stranger])

            let unknown = try await api.call(.get, "/v1/live?topics=hashtag:no%20tag", token: ana.token)
            #expect(unknown.status == .badRequest)
        }
    }
}
