import Testing

@Suite("API: profile tabs and image feeds")
struct PostKindAPITests {
    @Test(
        "a posts tab of one kind (original, reposts, media) and feeds with media=true hold only those posts, and page past the others; bad values are 400"
    )
    func kinds() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let bo = try await api.register("Bo")
            #expect(try await api.call(.put, "/v1/users/\(ana.id)/follow", token: bo.token).status == .ok)
            let bosPost = try await api.post(bo, "Bo's post")
            let image = try await api.uploadImage(ana)
            func create(_ json: [String: Any]) async throws -> String {
                let answer = try await api.call(.post, "/v1/posts", token: ana.token, json: json)
                return try #require(answer.object["id"] as? String, "\(answer.status)")
            }
            let text = try await create(["text": "just words"])
            let picture = try await create(["caption": "a picture", "image": image])
            let repost = try await create(["repostOf": bosPost])
            let quote = try await create(["repostOf": bosPost, "text": "so true"])
            let second = try await create(["image": image])

            func ids(_ path: String, token: String) async throws -> [String] {
                let answer = try await api.call(.get, path, token: token)
                #expect(answer.status == .ok, "\(path): \(answer.status)")
                return answer.items.compactMap { $0["id"] as? String }
            }
            let tab = "/v1/users/\(ana.id)/posts"
            #expect(try await ids(tab, token: bo.token) == [second, quote, repost, picture, text])
            #expect(try await ids(tab + "?kind=all", token: bo.token) == [second, quote, repost, picture, text])
            #expect(try await ids(tab + "?kind=original", token: bo.token) == [second, picture, text])
            #expect(try await ids(tab + "?kind=reposts", token: bo.token) == [quote, repost])
            #expect(try await ids(tab + "?kind=media", token: bo.token) == [second, picture])

            // Pages of one kind read past the others.
            let first = try await api.call(.get, tab + "?kind=media&limit=1", token: bo.token)
            #expect(first.items.compactMap { $0["id"] as? String } == [second])
            let cursor = try #require(first.object["nextCursor"] as? String)
            #expect(try await ids(tab + "?kind=media&limit=1&cursor=\(cursor)", token: bo.token) == [picture])

            #expect(try await ids("/v1/feed/following?media=true", token: bo.token) == [second, picture])
            #expect(try await ids("/v1/feed/home?media=true", token: bo.token) == [second, picture])
            #expect(try await ids("/v1/feed/following?media=false", token: bo.token).count == 6)

            for path in [tab + "?kind=photos", "/v1/feed/home?media=yes", "/v1/feed/following?media=1"] {
                let answer = try await api.call(.get, path, token: bo.token)
                #expect(answer.status == .badRequest && answer.errorCode == "bad_request", "\(path)")
            }
        }
    }
}
