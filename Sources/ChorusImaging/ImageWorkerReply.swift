import Foundation

/// What `chorus image-worker` writes on its standard output for its parent: one JSON line, then the bytes of the
/// `large` variant and of the `small` one, whose lengths the line gives.
public enum ImageWorkerReply: Sendable, Equatable {
    case processed(ProcessedImage)
    case refused(ImageRefusal)

    private struct Header: Codable {
        struct Variant: Codable {
            let type: ImageFormat
            let width: Int
            let height: Int
            let length: Int
        }
        var width = 0
        var height = 0
        var blurhash = ""
        var large: Variant?
        var small: Variant?
        /// `invalid_image` or `image_too_large`, with `reason`.
        var refused: String?
        var reason: String?
    }

    public func encoded() -> [UInt8] {
        var header = Header()
        var payload: [UInt8] = []
        switch self {
        case .processed(let image):
            func described(_ variant: ImageVariant) -> Header.Variant {
                Header.Variant(
                    type: variant.format, width: variant.width, height: variant.height, length: variant.bytes.count)
            }
            header.width = image.width
            header.height = image.height
            header.blurhash = image.blurHash
            header.large = described(image.large)
            header.small = described(image.small)
            payload = image.large.bytes + image.small.bytes
        case .refused(.invalid(let reason)):
            (header.refused, header.reason) = ("invalid_image", reason)
        case .refused(.tooLarge(let reason)):
            (header.refused, header.reason) = ("image_too_large", reason)
        }
        let line = (try? JSONEncoder().encode(header)) ?? Data()
        return Array(line) + [0x0A] + payload
    }

    /// The reply in `bytes`; nil when they are not one (the worker died part way).
    public init?(decoding bytes: [UInt8]) {
        guard let newline = bytes.firstIndex(of: 0x0A),
            let header = try? JSONDecoder().decode(Header.self, from: Data(bytes[..<newline]))
        else { return nil }
        if let refused = header.refused {
            let reason = header.reason ?? ""
            self = .refused(refused == "image_too_large" ? .tooLarge(reason) : .invalid(reason))
            return
        }
        guard let large = header.large, let small = header.small,
            bytes.count - newline - 1 == large.length + small.length
        else { return nil }
        let start = newline + 1
        func variant(_ described: Header.Variant, from offset: Int) -> ImageVariant {
            ImageVariant(
                format: described.type, width: described.width, height: described.height,
                bytes: Array(bytes[offset..<offset + described.length]))
        }
        self = .processed(
            ProcessedImage(
                width: header.width, height: header.height, blurHash: header.blurhash,
                large: variant(large, from: start), small: variant(small, from: start + large.length)))
    }
}
