import ChorusHTTP
import ChorusTestSupport
import CompressNIO
import HTTPTypes
import NIOCore
import Testing

@Suite("API: pages of posts gzipped for clients that take gzip")
struct GzipPagesAPITests {
    /// `answer`'s body as JSON bytes: unzipped when it came gzipped.
    static func unzipped(_ answer: APIFixture.Answer) throws -> [UInt8] {
        guard answer.headers[.contentEncoding] == "gzip" else { return answer.bytes }
        var buffer = ByteBuffer(bytes: answer.bytes)
        return Array(try buffer.decompress(with: .gzip()).readableBytesView)
    }

    @Test(
        "a page is gzipped when Accept-Encoding takes gzip, unzips to the bytes sent to others, and follows new posts",
        arguments: [true, false])
    func gzippedPages(keepingPages: Bool) async throws {
        var options = APIFixture.options
        if !keepingPages { options.server.keptPageBytes = 0 }
        try await withAPI(options: options) { api in
            let (ana, bo) = (try await api.register("Ana"), try await api.register("Bo"))
            for number in 1...12 { _ = try await api.post(ana, "Post \(number): a caption long enough to matter") }
            let tab = "/v1/users/\(ana.id)/posts"
            let plain = try await api.call(.get, tab, token: bo.token)
            #expect(plain.headers[.contentEncoding] == nil)
            #expect(plain.headers[.vary] == "Accept-Encoding")
            #expect(plain.items.count == 12 && plain.bytes.count > 2_000, "\(plain.bytes.count) bytes")

            let iOS = ["Accept-Encoding": "gzip, deflate, br"]
            let gzipped = try await api.call(.get, tab, token: bo.token, headers: iOS)
            #expect(gzipped.status == .ok)
            #expect(gzipped.headers[.contentEncoding] == "gzip")
            #expect(gzipped.headers[.vary] == "Accept-Encoding")
            #expect(gzipped.position == plain.position)
            #expect(try Self.unzipped(gzipped) == plain.bytes)
            #expect(gzipped.bytes.count * 3 < plain.bytes.count, "\(gzipped.bytes.count) of \(plain.bytes.count)")
            let again = try await api.call(.get, tab, token: bo.token, headers: iOS)
            #expect(again.bytes == gzipped.bytes)

            // A new post: the gzipped page shows it, as the plain one does.
            _ = try await api.post(ana, "Post 13, the newest")
            let newer = try await api.call(.get, tab, token: bo.token, headers: iOS)
            let newerPlain = try await api.call(.get, tab, token: bo.token)
            #expect(try Self.unzipped(newer) == newerPlain.bytes)
            #expect(newerPlain.items.first?["text"] as? String == "Post 13, the newest")

            // A page too short to be worth gzipping goes as it is.
            let short = try await api.call(.get, "/v1/users/\(bo.id)/posts", token: ana.token, headers: iOS)
            #expect(short.status == .ok && short.items.isEmpty)
            #expect(short.headers[.contentEncoding] == nil)
        }
    }

    @Test("Accept-Encoding is read as RFC 9110 says: names, the wildcard, weights of zero, case")
    func acceptEncoding() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            for number in 1...12 { _ = try await api.post(ana, "Post \(number): a caption long enough to matter") }
            let cases: [(String, Bool)] = [
                ("gzip", true), ("GZIP", true), ("x-gzip", true), ("*", true), ("deflate, gzip;q=0.5", true),
                ("br;q=1, gzip ; q=0.001", true), ("identity", false), ("br", false), ("gzip;q=0", false),
                ("gzip;q=0.000, *", false), ("*;q=0", false), ("br, *;q=0.2", true), ("", false),
            ]
            for (acceptEncoding, gzipped) in cases {
                let answer = try await api.call(
                    .get, "/v1/feed/following", token: ana.token, headers: ["Accept-Encoding": acceptEncoding])
                #expect(answer.status == .ok)
                #expect(
                    (answer.headers[.contentEncoding] == "gzip") == gzipped, "Accept-Encoding: \(acceptEncoding)")
                #expect(try Self.unzipped(answer).count > 2_000)
            }
        }
    }
}
