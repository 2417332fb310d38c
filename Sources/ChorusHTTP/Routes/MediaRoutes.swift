import ChorusBackend
import ChorusDomain
import Foundation
import Hummingbird

/// Image upload and download. Uploads are streamed to disk and refused at the first byte past 10 MiB; downloads are
/// immutable (an id is the digest of its bytes), so clients and proxies may cache them forever.
struct MediaRoutes {
    let endpoints: Endpoints

    func addOpen(to router: Router<ChorusRequestContext>) {
        let media = endpoints.backend.media
        router.get("/v1/media/:id") { request, context in
            guard let text = context.parameters.get("id"), let id = MediaID(text), media.contains(id) else {
                throw APIError.notFound("no such media")
            }
            var headers = HTTPFields()
            let etag = "\"\(id.rawValue)\""
            headers[.eTag] = etag
            headers[.cacheControl] = "public, max-age=31536000, immutable"
            if let match = request.headers[.ifNoneMatch],
                match.split(separator: ",").contains(where: {
                    $0.trimmingCharacters(in: .whitespaces) == etag || $0.trimmingCharacters(in: .whitespaces) == "*"
                })
            {
                return Response(status: .notModified, headers: headers)
            }
            guard let file = try media.contents(of: id) else { throw APIError.notFound("no such media") }
            headers[.contentType] = file.type.rawValue
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: file.bytes)))
        }
    }

    func addProtected(to group: RouterGroup<ChorusRequestContext>) {
        let media = endpoints.backend.media
        let renderer = endpoints.renderer
        group.post("media") { request, context in
            let caller = try context.requireCaller()
            let declared = request.headers[.contentType].map {
                $0.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
            }
            guard let declared, let type = MediaType(rawValue: declared) else {
                throw APIError.unsupportedMediaType("upload image/jpeg, image/png, image/gif or image/webp")
            }
            if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > MediaStore.maximumSize {
                throw APIError.tooLarge("media is at most \(MediaStore.maximumSize) bytes")
            }
            let upload = try media.beginUpload(owner: caller.user)
            let id: MediaID
            do {
                for try await buffer in request.body {
                    try buffer.withUnsafeReadableBytes { try upload.append($0) }
                }
                id = try await upload.finish(declared: type)
            } catch MediaUpload.Failure.tooLarge {
                throw APIError.tooLarge("media is at most \(MediaStore.maximumSize) bytes")
            } catch MediaUpload.Failure.unsupportedType {
                throw APIError.unsupportedMediaType("the bytes are not a \(type.rawValue) image")
            }
            let body = JSONBody.encode(MediaJSON(id: id.rawValue, url: renderer.imageURL(id) ?? ""))
            return Endpoints.json(.created, body, position: nil)
        }
    }
}
