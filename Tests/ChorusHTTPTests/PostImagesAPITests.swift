import ChorusBackend
import ChorusDomain
import ChorusHTTP
import ChorusTestSupport
import Foundation
import HTTPTypes
import Testing

@Suite("API: posts with several images")
struct PostImagesAPITests {
    /// Uploads `count` different images as `user`; returns their ids.
    private func upload(_ count: Int, as user: APIFixture.User, in api: APIFixture) async throws -> [String] {
        var ids: [String] = []
        for index in 0..<count {
            let answer = try await api.call(
                .post, "/v1/media", token: user.token, body: SampleImages.png(withText: "image \(index)"),
                headers: ["Content-Type": "image/png"])
            ids.append(try #require(answer.object["id"] as? String, "upload \(index): \(answer.status)"))
        }
        return ids
    }

    @Test("a post shows up to four images in order with their alt texts, and PATCH changes the alt texts")
    func fourImagesWithAlt() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let ids = try await upload(5, as: ana, in: api)
            let alts: [Any] = ["Boats at dawn", NSNull(), "", "Ein Hund im Schnee"]
            let media = zip(ids.prefix(4), alts).map { ["id": $0, "alt": $1] as [String: Any] }
            let created = try await api.call(
                .post, "/v1/posts", token: ana.token, json: ["text": "a day", "media": media])
            #expect(created.status == .created)
            let post = try #require(created.object["id"] as? String)
            func check(_ shown: [String: Any], alts expected: [String?], _ place: String) {
                let images = shown["media"] as? [[String: Any]] ?? []
                #expect(images.map { $0["id"] as? String } == ids.prefix(4).map { $0 }, "\(place): the order")
                #expect(images.map { $0["alt"] as? String } == expected, "\(place): the alt texts")
                #expect(images.allSatisfy { $0["alt"] != nil }, "\(place): alt is always there, null when none")
                for image in images {
                    let variants = image["variants"] as? [String: [String: Any]]
                    #expect(image["width"] as? Int != nil && image["blurhash"] as? String != nil, "\(place)")
                    #expect(
                        variants?["small"]?["url"] as? String
                            == "http://chorus.test/v1/media/\(image["id"]!)?size=small")
                }
                #expect(shown["image"] as? String == "http://chorus.test/v1/media/\(ids[0])", "\(place): version 1")
            }
            // An empty alt text is none.
            check(created.object, alts: ["Boats at dawn", nil, nil, "Ein Hund im Schnee"], "created")

            let newAlts = ["Boats", "Gulls over the pier", nil, "A dog"]
            let patched = try await api.call(
                .patch, "/v1/posts/\(post)", token: ana.token,
                json: ["media": zip(ids.prefix(4), newAlts).map { ["id": $0, "alt": $1 ?? NSNull()] as [String: Any] }])
            #expect(patched.status == .ok && !(patched.object["editedAt"] is NSNull))
            check(patched.object, alts: newAlts, "patched")
            #expect(patched.object["text"] as? String == "a day")
            check(try await api.call(.get, "/v1/posts/\(post)", token: ana.token).object, alts: newAlts, "read")
            let feed = try await api.call(.get, "/v1/feed/home", token: ana.token)
            check(try #require(feed.items.first), alts: newAlts, "feed")
            let grid = try await api.call(.get, "/v1/users/\(ana.id)/posts?kind=media", token: ana.token)
            #expect(grid.items.map { $0["id"] as? String } == [post])

            // The same images in another order, fewer of them, or others, change nothing.
            let head = api.head
            for wrong in [Array(ids.prefix(4).reversed()), Array(ids.prefix(3)), Array(ids.suffix(4))] {
                let refused = try await api.call(
                    .patch, "/v1/posts/\(post)", token: ana.token, json: ["media": wrong.map { ["id": $0] }])
                #expect(refused.status == .unprocessableContent && refused.errorCode == "invalid_field")
            }
            #expect(api.head == head)
        }
    }

    @Test(
        "five images, one twice, an unknown one, another's, a long alt text, image with media: each refused, nothing written"
    )
    func refusals() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let ids = try await upload(5, as: ana, in: api)
            let bo = try await api.register("Bo")
            let head = api.head
            // Another's upload, taken from their post: no one else's to show.
            for (path, body) in [
                ("/v1/posts", ["media": [["id": ids[0]]]]), ("/v1/posts", ["image": ids[0]]),
                ("/v1/me", ["profileImage": ids[0]]),
            ] as [(String, [String: Any])] {
                let answer = try await api.call(path == "/v1/me" ? .patch : .post, path, token: bo.token, json: body)
                #expect(answer.status == .unprocessableContent && answer.errorCode == "unknown_media", "\(body)")
            }
            let cases: [([String: Any], String)] = [
                (["media": ids.map { ["id": $0] }], "invalid_field"),
                (["media": [["id": ids[0]], ["id": ids[0]]]], "invalid_field"),
                (["media": [["id": ids[0]], ["id": "0123456789abcdef0123456789abcdef"]]], "unknown_media"),
                (["media": [["id": "../../etc/passwd"]]], "unknown_media"),
                (["media": [["id": ids[0], "alt": String(repeating: "a", count: 1501)]]], "text_too_long"),
                (["image": ids[0], "media": [["id": ids[1]]]], "invalid_field"),
            ]
            for (body, code) in cases {
                let answer = try await api.call(.post, "/v1/posts", token: ana.token, json: body)
                #expect(answer.status == .unprocessableContent && answer.errorCode == code, "\(body)")
            }
            #expect(api.head == head)
            let longest = try await api.call(
                .post, "/v1/posts", token: ana.token,
                json: ["media": [["id": ids[0], "alt": String(repeating: "가", count: 1500)]]])
            #expect(longest.status == .created, "1,500 characters of alt text are allowed")
        }
    }

    @Test("an image that no post or profile shows within its lifetime is removed; shown ones stay")
    func unattachedImagesRemoved() async throws {
        // Long enough for an upload and a post on a loaded machine; sweeps every 7.5 s.
        var options = APIFixture.options
        options.unattachedMediaLifetime = .seconds(30)
        try await withAPI(options: options) { api in
            let ana = try await api.register("Ana")
            // Each attached as soon as it is uploaded, well within its lifetime.
            let posted = try await upload(1, as: ana, in: api)[0]
            let post = try await api.call(.post, "/v1/posts", token: ana.token, json: ["media": [["id": posted]]])
            #expect(post.status == .created)
            let shown = try await api.uploadImage(ana)
            let profile = try await api.call(.patch, "/v1/me", token: ana.token, json: ["profileImage": shown])
            #expect(profile.status == .ok)
            let upload = try await api.call(
                .post, "/v1/media", token: ana.token, body: SampleImages.png(withText: "never used"),
                headers: ["Content-Type": "image/png"])
            let unused = try #require(upload.object["id"] as? String)
            // All three uploaded an hour ago, as the store tells an upload's age: the next sweep looks at each.
            for id in [posted, shown, unused] {
                try FileManager.default.setAttributes(
                    [.modificationDate: Date(timeIntervalSinceNow: -3600)],
                    ofItemAtPath: "\(api.backend.data.media)/\(ana.id)/\(id).info")
            }
            func removals() throws -> [String] {
                var removed: [String] = []
                try api.backend.log.scan { event in
                    if case .mediaRemoved(let removal) = try DomainEvent(decoding: event, keys: api.backend.keys) {
                        removed.append(removal.media.rawValue)
                    }
                }
                return removed
            }
            func files() throws -> [String] {
                try FileManager.default.subpathsOfDirectory(atPath: api.backend.data.media)
            }
            // Removed: in the log, and then its files.
            try await eventually("the unused image removed", timeout: .seconds(60), every: .milliseconds(100)) {
                try !removals().isEmpty && !files().contains { $0.contains(unused) }
            }
            #expect(try removals() == [unused], "the log says which image went, once")
            #expect(try await api.call(.get, "/v1/media/\(unused)").status == .notFound)
            // The sweep that removed the unused one saw the others just as old, and kept them.
            for id in [posted, shown] {
                for size in ["large", "small"] {
                    #expect(try await api.call(.get, "/v1/media/\(id)?size=\(size)").status == .ok, "\(id) \(size)")
                }
            }
            let late = try await api.call(.post, "/v1/posts", token: ana.token, json: ["media": [["id": unused]]])
            #expect(late.status == .unprocessableContent && late.errorCode == "unknown_media")
        }
    }
}
