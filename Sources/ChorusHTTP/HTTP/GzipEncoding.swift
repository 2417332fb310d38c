import CompressNIO
import HTTPTypes
import NIOCore

/// A page's body as sent: gzipped for a client whose `Accept-Encoding` takes gzip (iOS's URLSession and Android's
/// OkHttp send it by default), or as rendered. Pages of posts are most of what apps download, their JSON shrinks four- to
/// sevenfold, and a kept page is gzipped once for every time it is sent (``RenderedPages``).
struct EncodedBody: Sendable {
    /// Below this, gzip's header and the CPU it takes outweigh what it saves.
    static let minimumGzippedBytes = 1024
    /// A body that gzips to less than this fraction is sent as it is: clients guard against zip bombs by a ratio
    /// (AsyncHTTPClient's shared client refuses an answer that unzips to more than 25 times its size), and JSON of
    /// real posts, ids and URLs gzips four- to sevenfold; only text repeated over and over goes further.
    static let largestRatio = 20

    let bytes: ByteBuffer
    let isGzipped: Bool

    /// `body` for a client that takes gzip or not: gzipped when it is long enough and comes out smaller, but not
    /// more than ``largestRatio`` times.
    init(_ body: ByteBuffer, gzip: Bool) {
        guard gzip, body.readableBytes >= Self.minimumGzippedBytes, let gzipped = Self.gzipped(body),
            gzipped.readableBytes < body.readableBytes,
            gzipped.readableBytes * Self.largestRatio >= body.readableBytes
        else {
            self.bytes = body
            self.isGzipped = false
            return
        }
        self.bytes = gzipped
        self.isGzipped = true
    }

    /// zlib's fastest level: a page made again after each change is gzipped again, and the ids and URLs that make most
    /// of it compress little better at higher levels.
    private static func gzipped(_ body: ByteBuffer) -> ByteBuffer? {
        var input = body
        return try? input.compress(with: .gzip(configuration: .init(compressionLevel: .fastestCompression)))
    }

    /// Whether `fields` take a gzipped answer: `Accept-Encoding` names gzip (or x-gzip), or else `*`, with a weight
    /// above zero (RFC 9110, section 12.5.3). No `Accept-Encoding` asks for the body as it is. Read as bytes: every
    /// page request asks.
    static func isAccepted(by fields: HTTPFields) -> Bool {
        var named: Bool?
        var any: Bool?
        for value in fields[values: .acceptEncoding] {
            for member in value.utf8.split(separator: UInt8(ascii: ",")) {
                let parts = member.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: false)
                let coding = trimmed(parts[0])
                let accepted = parts.dropFirst().allSatisfy { !isZeroWeight(trimmed($0)) }
                if equalsIgnoringCase(coding, "gzip") || equalsIgnoringCase(coding, "x-gzip") {
                    named = (named ?? false) || accepted
                } else if equalsIgnoringCase(coding, "*") {
                    any = (any ?? false) || accepted
                }
            }
        }
        return named ?? any ?? false
    }

    /// `q=0`, `q=0.0`, `q=0.000`: the coding is refused.
    private static func isZeroWeight(_ parameter: Substring.UTF8View) -> Bool {
        guard parameter.count >= 3, equalsIgnoringCase(parameter.prefix(2), "q=") else { return false }
        let weight = parameter.dropFirst(2)
        return weight.first == UInt8(ascii: "0")
            && weight.dropFirst().allSatisfy { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "0") }
    }

    private static func trimmed(_ text: Substring.UTF8View) -> Substring.UTF8View {
        let isSpace = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard let first = text.firstIndex(where: { !isSpace($0) }), let last = text.lastIndex(where: { !isSpace($0) })
        else { return text[text.endIndex...] }
        return text[first...last]
    }

    /// Whether `text` is `lowercase` (ASCII) in any case.
    private static func equalsIgnoringCase(_ text: Substring.UTF8View, _ lowercase: StaticString) -> Bool {
        guard text.count == lowercase.utf8CodeUnitCount else { return false }
        return lowercase.withUTF8Buffer { expected in
            text.elementsEqual(expected) { byte, lower in
                ((UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte) == lower
            }
        }
    }
}
