import ChorusBackend
import ChorusDomain
import ChorusImaging
import Foundation
import Hummingbird

/// Image upload and download. Uploads are streamed to disk, refused at the first byte past 20 MiB, and run through the
/// image pipeline before the answer: what is stored and served is only what it wrote. Downloads are immutable (an id
/// is the digest of the upload), so clients and proxies may cache them forever; they answer `HEAD` and `Range`.
struct MediaRoutes {
    let endpoints: Endpoints

    func addOpen(to router: Router<ChorusRequestContext>) {
        let media = endpoints.backend.media
        router.get("/v1/media/:id") { request, context in
            try Self.serve(request, context, media: media, body: true)
        }
        router.head("/v1/media/:id") { request, context in
            try Self.serve(request, context, media: media, body: false)
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
            guard let declared, let type = UploadFormat(rawValue: declared) else {
                throw APIError.unsupportedMediaType(
                    "upload " + UploadFormat.allCases.map(\.rawValue).joined(separator: ", "))
            }
            if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > MediaStore.maximumSize {
                throw APIError.tooLarge("media is at most \(MediaStore.maximumSize) bytes")
            }
            let upload = try media.beginUpload(owner: caller.user)
            let stored: (id: MediaID, info: MediaInfo?)
            do {
                for try await buffer in request.body {
                    try buffer.withUnsafeReadableBytes { try upload.append($0) }
                }
                stored = try await upload.finish(declared: type)
            } catch is MediaUpload.TooLarge {
                throw APIError.tooLarge("media is at most \(MediaStore.maximumSize) bytes")
            } catch ImageRefusal.invalid(let reason) {
                throw APIError.invalidImage(reason)
            } catch ImageRefusal.tooLarge(let reason) {
                throw APIError.imageTooLarge(reason)
            } catch is ImageWorkerPool.Busy {
                throw APIError.unavailable("too many images are being processed; retry shortly")
            } catch is MediaStore.BeingRemoved {
                throw APIError.unavailable("this image is being removed, unattached for a day; send it again shortly")
            }
            let body = JSONBody.encode(renderer.mediaJSON(stored.id, info: stored.info))
            return Endpoints.json(.created, body, position: nil)
        }
    }

    private static func serve(
        _ request: Request, _ context: ChorusRequestContext, media: MediaStore, body: Bool
    ) throws -> Response {
        guard let text = context.parameters.get("id"), let id = MediaID(text), media.contains(id) else {
            throw APIError.notFound("no such media")
        }
        let size: MediaSize
        switch request.uri.queryParameters.get("size") {
        case nil: size = .large
        case let name?:
            guard let named = MediaSize(rawValue: name) else { throw APIError.badRequest("size is small or large") }
            size = named
        }
        var headers = HTTPFields()
        let etag = "\"\(id.rawValue)-\(size.rawValue)\""
        headers[.eTag] = etag
        headers[.cacheControl] = "public, max-age=31536000, immutable"
        headers[.acceptRanges] = "bytes"
        if let match = request.headers[.ifNoneMatch],
            match.split(separator: ",").contains(where: {
                let tag = $0.trimmingCharacters(in: .whitespaces)
                return tag == etag || tag == "*"
            })
        {
            return Response(status: .notModified, headers: headers)
        }
        guard let file = try media.contents(of: id, size: size) else { throw APIError.notFound("no such media") }
        headers[.contentType] = file.type.rawValue
        var status = HTTPResponse.Status.ok
        var range = 0..<file.bytes.count
        if let asked = request.headers[.range] {
            switch ByteRange(asked, length: file.bytes.count) {
            case .whole: break
            case .part(let part):
                (status, range) = (.partialContent, part)
                headers[.contentRange] = "bytes \(part.lowerBound)-\(part.upperBound - 1)/\(file.bytes.count)"
            case .unsatisfiable:
                headers[.contentRange] = "bytes */\(file.bytes.count)"
                return Response(status: .rangeNotSatisfiable, headers: headers)
            }
        }
        headers[.contentLength] = String(range.count)
        guard body else { return Response(status: status, headers: headers) }
        return Response(
            status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: file.bytes[range])))
    }
}

/// What a `Range` header asks of a file: one range of bytes (RFC 9110, 14.1.2). Several ranges, or a header that does
/// not parse, get the whole file, as the RFC allows.
enum ByteRange: Equatable {
    case whole
    case part(Range<Int>)
    case unsatisfiable

    init(_ header: String, length: Int) {
        let spec = header.trimmingCharacters(in: .whitespaces)
        guard spec.hasPrefix("bytes="), !spec.contains(",") else {
            self = .whole
            return
        }
        let bounds = spec.dropFirst("bytes=".count).split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2 else {
            self = .whole
            return
        }
        let first = Int(bounds[0].trimmingCharacters(in: .whitespaces))
        let last = Int(bounds[1].trimmingCharacters(in: .whitespaces))
        switch (first, last, bounds[0].isEmpty, bounds[1].isEmpty) {
        case (nil, let suffix?, true, false) where suffix > 0:
            self = length == 0 ? .unsatisfiable : .part(max(0, length - suffix)..<length)
        case (let start?, nil, false, true) where start >= 0:
            self = start < length ? .part(start..<length) : .unsatisfiable
        case (let start?, let end?, false, false) where start >= 0 && end >= start:
            self = start < length ? .part(start..<min(end + 1, length)) : .unsatisfiable
        case (nil, .some(0), true, false):
            self = .unsatisfiable
        default:
            self = .whole
        }
    }
}
