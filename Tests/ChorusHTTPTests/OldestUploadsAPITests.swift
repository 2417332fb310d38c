import ChorusBackend
import ChorusDomain
import ChorusTestSupport
import Foundation
import Synchronization
import Testing

@Suite("API: uploads the oldest Chorus kept in plain")
struct OldestUploadsAPITests {
    @Test(
        "at the next start each goes to the author of the post that showed it, served only as the pipeline makes it; one no post showed is gone"
    )
    func sealedUnderTheirAuthor() async throws {
        try await withTemporaryDirectory { directory in
            let original = SampleImages.bytes("photo.jpg")
            let made = Mutex<(author: APIFixture.User, media: String, post: String)?>(nil)
            try await withAPI(in: directory) { api in
                let ana = try await api.register("Ana")
                let media = try await api.uploadImage(ana)
                let post = try await api.call(.post, "/v1/posts", token: ana.token, json: ["media": [["id": media]]])
                let id = try #require(post.object["id"] as? String)
                made.withLock { $0 = (ana, media, id) }
            }
            let (author, media, post) = try #require(made.withLock { $0 })
            // As the oldest Chorus kept uploads: as they came, plain, in media/ itself.
            let folder = DataDirectory(directory).media
            try FileManager.default.removeItem(atPath: folder + "/" + author.id)
            let orphan = MediaID.make().rawValue
            for id in [media, orphan] {
                try Data(original).write(to: URL(fileURLWithPath: "\(folder)/\(id).jpg"))
            }

            var options = APIFixture.options
            options.erasureDelay = .seconds(1)
            try await withAPI(in: directory, options: options) { api in
                let bo = try await api.register("Bo")
                // The upgrade runs beside the server, as it starts.
                let image = try await eventually {
                    let shown = try await api.call(.get, "/v1/posts/\(post)", token: bo.token)
                    let images = shown.object["media"] as? [[String: Any]] ?? []
                    guard let first = images.first, first["blurhash"] is String else {
                        throw StreamError("no sizes yet")
                    }
                    return first
                }
                #expect(image["width"] as? Int == 240 && image["height"] as? Int == 320, "turned upright")
                for size in ["small", "large"] {
                    let served = try await api.call(.get, "/v1/media/\(media)?size=\(size)")
                    #expect(served.status == .ok && served.headers[.contentType] == "image/jpeg")
                    let text = String(decoding: served.bytes, as: UTF8.self)
                    #expect(!SampleImages.metadataMarkers.contains { text.contains($0) }, "\(size)")
                }
                #expect(try await api.call(.get, "/v1/media/\(orphan)").status == .notFound)
                let plain = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".jpg") }
                #expect(plain.isEmpty, "no upload is left as it came: \(plain)")

                // It is its author's now: their erasure takes it with the rest of their uploads.
                let deleted = try await api.call(
                    .delete, "/v1/me", token: author.token, json: ["password": "secret-password"])
                #expect(deleted.status == .accepted)
                try await eventually("the author's uploads erased") {
                    !FileManager.default.fileExists(atPath: folder + "/" + author.id)
                }
                #expect(try await api.call(.get, "/v1/media/\(media)").status == .notFound)
            }
        }
    }
}
