import ChorusImaging

/// What the API's `Media` object says of a stored image: its upright size, its BlurHash, and its variants' types and
/// sizes. Kept sealed beside the variants (`<id>.info`).
public struct MediaInfo: Sendable, Codable, Equatable {
    public struct Variant: Sendable, Codable, Equatable {
        public let type: ImageFormat
        public let width: Int
        public let height: Int
    }

    public let width: Int
    public let height: Int
    public let blurhash: String
    public let large: Variant
    public let small: Variant

    init(_ image: ProcessedImage) {
        func variant(_ variant: ImageVariant) -> Variant {
            Variant(type: variant.format, width: variant.width, height: variant.height)
        }
        (width, height, blurhash) = (image.width, image.height, image.blurHash)
        (large, small) = (variant(image.large), variant(image.small))
    }
}

/// The sizes an image is served in.
public enum MediaSize: String, Sendable, CaseIterable {
    case large
    case small
}
