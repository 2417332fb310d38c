import ChorusLog
import NIOCore
import Testing

@testable import ChorusHTTP
@testable import ChorusProjections

@Suite("Kept pages: memory")
struct RenderedPagesTests {
    private func footprint(buckets: Int) -> ReadFootprint {
        ReadFootprint(engine: 1, position: LogPosition(7), buckets: (0..<UInt32(buckets)).map { $0 }, expiresAt: nil)
    }

    @Test("pages are kept within the budget, the oldest going first, and one too large for it is not kept")
    func budget() {
        let pages = RenderedPages(budget: 64 << 10)
        let body = ByteBuffer(repeating: UInt8(ascii: "x"), count: 1_000)
        for index in 0..<500 {
            pages.keep(
                body, read: footprint(buckets: 40), for: .init(caller: "u\(index % 100)", target: "/v1/feed/\(index)"))
        }
        let (count, bytes) = pages.kept
        #expect(bytes <= 64 << 10)
        #expect(count > 40 && count < 64, "about 1.3 KB each: \(count)")
        #expect(pages.isKept(.init(caller: "u99", target: "/v1/feed/499")))
        #expect(!pages.isKept(.init(caller: "u0", target: "/v1/feed/0")))
        let large = ByteBuffer(repeating: 0, count: 8 << 10)
        pages.keep(large, read: footprint(buckets: 1), for: .init(caller: "u0", target: "/large"))
        #expect(!pages.isKept(.init(caller: "u0", target: "/large")), "more than a sixteenth of the budget")
    }

    @Test("empty pages count what keeping them costs, not only their bytes")
    func emptyPages() {
        let pages = RenderedPages(budget: 64 << 10)
        for index in 0..<10_000 {
            pages.keep(
                ByteBuffer(string: "{\"items\":[]}"), read: footprint(buckets: 20),
                for: .init(caller: "u\(index)", target: "/v1/feed/following"))
        }
        #expect(pages.kept.pages < 400, "\(pages.kept.pages) empty pages in 64 KB")
    }

    @Test("the same page kept again replaces the one before, and the memory stays counted once")
    func keptAgain() {
        let pages = RenderedPages(budget: 1 << 20)
        let key = RenderedPages.Key(caller: "u1", target: "/v1/feed/following")
        for size in [100, 2_000, 300] {
            pages.keep(ByteBuffer(repeating: 1, count: size), read: footprint(buckets: 10), for: key)
        }
        #expect(pages.kept.pages == 1)
        #expect(pages.kept.bytes < 1_000)
    }

    @Test("a page kept for a client that takes gzip keeps its gzipped bytes too, counted in the memory")
    func gzippedCounted() {
        let pages = RenderedPages(budget: 1 << 20)
        var random = SystemRandomNumberGenerator()
        let posts = (0..<100).map { _ in #"{"id":"\#(random.next() as UInt64)","text":"a post"}"# }
        let body = ByteBuffer(string: "[" + posts.joined(separator: ",") + "]")
        let plain = pages.keep(body, read: footprint(buckets: 10), for: .init(caller: "u1", target: "/a"))
        #expect(!plain.isGzipped && plain.bytes == body)
        let plainCost = pages.kept.bytes
        let gzipped = pages.keep(
            body, read: footprint(buckets: 10), for: .init(caller: "u2", target: "/b"), gzip: true)
        #expect(gzipped.isGzipped && gzipped.bytes.readableBytes < body.readableBytes / 2)
        #expect(pages.kept.bytes == 2 * plainCost + gzipped.bytes.readableBytes)
        // Too short to gain from gzip: sent as it is.
        let short = pages.keep(
            ByteBuffer(string: #"{"items":[]}"#), read: footprint(buckets: 1), for: .init(caller: "u3", target: "/"),
            gzip: true)
        #expect(!short.isGzipped)
        // Gzipped more than twentyfold, past what clients take from a zip bomb: sent as it is, and its memory counted
        // once.
        let repeated = ByteBuffer(string: String(repeating: #"{"text":"again"},"#, count: 200))
        let before = pages.kept.bytes
        let plainAgain = pages.keep(
            repeated, read: footprint(buckets: 1), for: .init(caller: "u4", target: "/"), gzip: true)
        #expect(!plainAgain.isGzipped && plainAgain.bytes == repeated)
        #expect(
            pages.kept.bytes == before + repeated.readableBytes + "u4/".utf8.count + footprint(buckets: 1).size + 128)
    }
}
