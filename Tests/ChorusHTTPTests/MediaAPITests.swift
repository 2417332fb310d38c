import ChorusBackend
import ChorusHTTP
import Foundation
import HTTPTypes
import Testing

@Suite("API: media")
struct MediaAPITests {
    static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 7, count: 100)

    @Test("an upload is stored once by content and served with its type, ETag and immutable caching")
    func uploadAndServe() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let upload = try await api.call(
                .post, "/v1/media", token: ana.token, body: Self.png, headers: ["Content-Type": "image/png"])
            #expect(upload.status == .created)
            let id = try #require(upload.object["id"] as? String)
            #expect(upload.object["url"] as? String == "http://chorus.test/v1/media/\(id)")
            let again = try await api.call(
                .post, "/v1/media", token: ana.token, body: Self.png, headers: ["Content-Type": "image/png"])
            #expect(again.object["id"] as? String == id, "content-addressed")

            let served = try await api.call(.get, "/v1/media/\(id)")
            #expect(served.status == .ok && served.bytes == Self.png)
            #expect(served.headers[.contentType] == "image/png")
            #expect(served.headers[.cacheControl] == "public, max-age=31536000, immutable")
            let etag = try #require(served.headers[.eTag])
            #expect(
                try await api.call(.get, "/v1/media/\(id)", headers: ["If-None-Match": etag]).status == .notModified)

            let post = try await api.call(
                .post, "/v1/posts", token: ana.token, json: ["image": id, "caption": "sunset"])
            #expect(post.status == .created && post.object["image"] as? String == "http://chorus.test/v1/media/\(id)")
            let me = try await api.call(.patch, "/v1/me", token: ana.token, json: ["profileImage": id])
            #expect(me.object["profileImage"] as? String == "http://chorus.test/v1/media/\(id)")
            let removed = try await api.call(.patch, "/v1/me", token: ana.token, json: ["profileImage": NSNull()])
            #expect(removed.object["profileImage"] is NSNull)
        }
    }

    @Test(
        "uploads: a type the bytes contradict, a non-image type, more than 10 MiB, no token; ids that leave the folder")
    func refusals() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let lying = try await api.call(
                .post, "/v1/media", token: ana.token, body: Self.png, headers: ["Content-Type": "image/jpeg"])
            #expect(lying.status == .unsupportedMediaType && lying.errorCode == "unsupported_media_type")
            let text = try await api.call(
                .post, "/v1/media", token: ana.token, body: Array("hello".utf8), headers: ["Content-Type": "text/plain"]
            )
            #expect(text.status == .unsupportedMediaType)
            let huge = Self.png + Array(repeating: 0, count: 10 << 20)
            let tooLarge = try await api.call(
                .post, "/v1/media", token: ana.token, body: huge, headers: ["Content-Type": "image/png"])
            #expect(tooLarge.status == .contentTooLarge && tooLarge.errorCode == "too_large")
            #expect(
                try await api.call(.post, "/v1/media", body: Self.png, headers: ["Content-Type": "image/png"]).status
                    == .unauthorized)
            for id in ["..%2F..%2Fsession.key", "..", "0000000000000000000000000a.png", "x"] {
                #expect(try await api.call(.get, "/v1/media/\(id)").status == .notFound, "\(id)")
            }
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: api.backend.data.media)
            #expect(leftovers.isEmpty, "refused uploads leave no files: \(leftovers)")
        }
    }
}
