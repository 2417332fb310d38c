import ChorusBackend
import ChorusHTTP
import ChorusTestSupport
import Foundation
import HTTPTypes
import Testing

@Suite("API: media")
struct MediaAPITests {
    @Test("an upload is processed once, and served in two sizes with ETag, immutable caching, HEAD and Range")
    func uploadAndServe() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let photo = SampleImages.bytes("photo.jpg")
            let upload = try await api.call(
                .post, "/v1/media", token: ana.token, body: photo, headers: ["Content-Type": "image/jpeg"])
            #expect(upload.status == .created)
            let id = try #require(upload.object["id"] as? String)
            let url = "http://chorus.test/v1/media/\(id)"
            // 320×240 with orientation 6: upright it is 240×320.
            #expect(upload.object["url"] as? String == url && upload.object["type"] as? String == "image/jpeg")
            #expect(upload.object["width"] as? Int == 240 && upload.object["height"] as? Int == 320)
            let blurhash = try #require(upload.object["blurhash"] as? String)
            #expect(blurhash.count == 28, "4×3 components: \(blurhash)")
            let variants = try #require(upload.object["variants"] as? [String: [String: Any]])
            #expect(
                variants["large"]?["url"] as? String == url
                    && variants["small"]?["url"] as? String == url + "?size=small")
            #expect(variants["large"]?["width"] as? Int == 240 && variants["large"]?["height"] as? Int == 320)
            let again = try await api.call(
                .post, "/v1/media", token: ana.token, body: photo, headers: ["Content-Type": "image/jpeg"])
            #expect(again.object["id"] as? String == id && again.object["blurhash"] as? String == blurhash)

            let large = try await api.call(.get, "/v1/media/\(id)")
            #expect(large.status == .ok && large.headers[.contentType] == "image/jpeg" && large.bytes != photo)
            #expect(large.headers[.cacheControl] == "public, max-age=31536000, immutable")
            let small = try await api.call(.get, "/v1/media/\(id)?size=small")
            // Neither size is larger than the image: at 240×320 both are the whole image.
            #expect(small.status == .ok && small.bytes.starts(with: [0xFF, 0xD8]))
            #expect(try await api.call(.get, "/v1/media/\(id)?size=huge").status == .badRequest)
            let etag = try #require(large.headers[.eTag])
            #expect(etag != small.headers[.eTag])
            #expect(
                try await api.call(.get, "/v1/media/\(id)", headers: ["If-None-Match": etag]).status == .notModified)

            let head = try await api.call(.head, "/v1/media/\(id)?size=small")
            #expect(head.status == .ok && head.bytes.isEmpty)
            #expect(head.headers[.contentLength] == String(small.bytes.count) && head.headers[.eTag] != nil)
            let part = try await api.call(.get, "/v1/media/\(id)", headers: ["Range": "bytes=10-19"])
            #expect(part.status == .partialContent && part.bytes == Array(large.bytes[10..<20]))
            #expect(part.headers[.contentRange] == "bytes 10-19/\(large.bytes.count)")
            let tail = try await api.call(.get, "/v1/media/\(id)", headers: ["Range": "bytes=-5"])
            #expect(tail.status == .partialContent && tail.bytes == Array(large.bytes.suffix(5)))
            let past = try await api.call(.get, "/v1/media/\(id)", headers: ["Range": "bytes=99999999-"])
            #expect(
                past.status == .rangeNotSatisfiable && past.headers[.contentRange] == "bytes */\(large.bytes.count)")

            let post = try await api.call(
                .post, "/v1/posts", token: ana.token, json: ["image": id, "caption": "sunset"])
            #expect(post.status == .created && post.object["image"] as? String == url)
            let media = try #require((post.object["media"] as? [[String: Any]])?.first)
            #expect(media["id"] as? String == id && media["blurhash"] as? String == blurhash && media["alt"] is NSNull)
            let me = try await api.call(.patch, "/v1/me", token: ana.token, json: ["profileImage": id])
            #expect(me.object["profileImage"] as? String == url + "?size=small")
            let removed = try await api.call(.patch, "/v1/me", token: ana.token, json: ["profileImage": NSNull()])
            #expect(removed.object["profileImage"] is NSNull)
        }
    }

    @Test("every kind of metadata is gone from every size served and from every file of the data directory")
    func metadataRemoved() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let thumbnail = Array(SampleImages.bytes("thumb.jpg").dropFirst(200).drop { $0 == 0 }.prefix(64))
            for (file, type) in [
                ("photo.jpg", "image/jpeg"), ("photo.png", "image/png"), ("photo.webp", "image/webp"),
                ("photo.heic", "image/heic"),
            ] {
                let upload = try await api.call(
                    .post, "/v1/media", token: ana.token, body: SampleImages.bytes(file),
                    headers: ["Content-Type": type])
                #expect(upload.status == .created, "\(file): \(upload.object)")
                let id = try #require(upload.object["id"] as? String)
                for size in ["small", "large"] {
                    let served = try await api.call(.get, "/v1/media/\(id)?size=\(size)")
                    #expect(served.status == .ok)
                    let found = Self.leaks(in: served.bytes, thumbnail: thumbnail)
                    #expect(found.isEmpty, "\(file) \(size) still holds \(found)")
                }
            }
            let files = FileManager.default.enumerator(atPath: api.backend.data.root)
            while let name = files?.nextObject() as? String {
                let found = try Self.mapped(api.backend.data.root + "/" + name) {
                    Self.leaks(in: $0, thumbnail: thumbnail)
                }
                #expect(found?.isEmpty ?? true, "\(name) holds \(found ?? [])")
            }
        }
    }

    /// `body` over the bytes of the regular file at `path`, mapped (the stores' files are mostly unused map space);
    /// nil for a folder or an empty file.
    static func mapped<T>(_ path: String, _ body: (UnsafeRawBufferPointer) -> T) throws -> T? {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_size > 0 else {
            return nil
        }
        let length = Int(status.st_size)
        guard let base = mmap(nil, length, PROT_READ, MAP_PRIVATE, descriptor, 0), base != MAP_FAILED else {
            return nil
        }
        defer { munmap(base, length) }
        return body(UnsafeRawBufferPointer(start: base, count: length))
    }

    /// The metadata markers, the EXIF and XMP headers and the embedded thumbnail's bytes that `bytes` holds.
    static func leaks(in bytes: [UInt8], thumbnail: [UInt8]) -> [String] {
        bytes.withUnsafeBytes { leaks(in: $0, thumbnail: thumbnail) }
    }

    static func leaks(in bytes: UnsafeRawBufferPointer, thumbnail: [UInt8]) -> [String] {
        let needles = SampleImages.metadataMarkers + ["Exif\0\0", "http://ns.adobe.com/xap", "Photoshop 3.0"]
        var found = needles.filter { Self.contains(bytes, Array($0.utf8)) }
        if Self.contains(bytes, thumbnail) { found.append("the embedded thumbnail") }
        return found
    }

    /// Whether `needle` (whose first byte is not zero) is in `haystack`: memchr and memcmp, quick over the zeros
    /// of a store's unused pages.
    static func contains(_ haystack: UnsafeRawBufferPointer, _ needle: [UInt8]) -> Bool {
        guard let base = haystack.baseAddress, let first = needle.first, haystack.count >= needle.count else {
            return false
        }
        var offset = 0
        while offset + needle.count <= haystack.count {
            guard let hit = memchr(base + offset, Int32(first), haystack.count - offset - needle.count + 1) else {
                return false
            }
            if needle.withUnsafeBytes({ memcmp(hit, $0.baseAddress!, needle.count) }) == 0 { return true }
            offset = UnsafeRawPointer(hit) - base + 1
        }
        return false
    }

    @Test("animations keep their frames in large and give their first in small; a transparent PNG stays PNG")
    func animationAndTransparency() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let gif = try await api.call(
                .post, "/v1/media", token: ana.token, body: SampleImages.bytes("animated.gif"),
                headers: ["Content-Type": "image/gif"])
            let id = try #require(gif.object["id"] as? String)
            #expect(gif.object["width"] as? Int == 80 && gif.object["height"] as? Int == 60)
            let large = try await api.call(.get, "/v1/media/\(id)")
            #expect(large.headers[.contentType] == "image/gif" && Self.gifFrames(large.bytes) == 3)
            let small = try await api.call(.get, "/v1/media/\(id)?size=small")
            #expect(small.headers[.contentType] == "image/jpeg")

            let png = try await api.call(
                .post, "/v1/media", token: ana.token, body: SampleImages.bytes("alpha.png"),
                headers: ["Content-Type": "image/png"])
            let pngID = try #require(png.object["id"] as? String)
            for size in ["small", "large"] {
                let served = try await api.call(.get, "/v1/media/\(pngID)?size=\(size)")
                #expect(served.headers[.contentType] == "image/png", "\(size)")
            }
        }
    }

    /// Image descriptors (0x2C after a block boundary) are what a GIF has one of per frame; counted roughly.
    static func gifFrames(_ bytes: [UInt8]) -> Int {
        var frames = 0
        for index in bytes.indices.dropLast(10) where bytes[index] == 0x21 && bytes[index + 1] == 0xF9 {
            frames += 1
        }
        return frames
    }

    @Test("refused: bytes of another type, not an image, a decompression bomb, more than 20 MiB, no token")
    func refusals() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            func upload(_ bytes: [UInt8], _ type: String, token: String? = nil) async throws -> APIFixture.Answer {
                try await api.call(
                    .post, "/v1/media", token: token ?? ana.token, body: bytes, headers: ["Content-Type": type])
            }
            let png = SampleImages.png
            let lying = try await upload(png, "image/jpeg")
            #expect(lying.status == .unprocessableContent && lying.errorCode == "invalid_image")
            let fake = try await upload([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 1, 2, 3], "image/png")
            #expect(fake.status == .unprocessableContent && fake.errorCode == "invalid_image")
            let truncated = try await upload(Array(SampleImages.bytes("photo.jpg").prefix(3_000)), "image/jpeg")
            #expect(truncated.errorCode == "invalid_image", "\(truncated.object)")
            let bomb = try await upload(SampleImages.pngBomb(width: 60_000, height: 60_000), "image/png")
            #expect(bomb.status == .unprocessableContent && bomb.errorCode == "image_too_large", "\(bomb.object)")
            let text = try await upload(Array("hello".utf8), "text/plain")
            #expect(text.status == .unsupportedMediaType)
            let huge = png + Array(repeating: 0, count: 20 << 20)
            let tooLarge = try await upload(huge, "image/png")
            #expect(tooLarge.status == .contentTooLarge && tooLarge.errorCode == "too_large")
            #expect(
                try await api.call(.post, "/v1/media", body: png, headers: ["Content-Type": "image/png"]).status
                    == .unauthorized)
            for id in ["..%2F..%2Fsession.key", "..", "0000000000000000000000000a.png", "x"] {
                #expect(try await api.call(.get, "/v1/media/\(id)").status == .notFound, "\(id)")
            }
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: api.backend.data.media)
            #expect(leftovers.isEmpty, "refused uploads leave no files: \(leftovers)")
        }
    }
}
