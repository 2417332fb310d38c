/// One size of a processed image: what is stored and served, nothing else.
public struct ImageVariant: Sendable, Equatable {
    public let format: ImageFormat
    public let width: Int
    public let height: Int
    public let bytes: [UInt8]

    public init(format: ImageFormat, width: Int, height: Int, bytes: [UInt8]) {
        self.format = format
        self.width = width
        self.height = height
        self.bytes = bytes
    }
}

/// What the pipeline makes of an upload: the upright size of the image, its BlurHash, and its two variants.
public struct ProcessedImage: Sendable, Equatable {
    public let width: Int
    public let height: Int
    public let blurHash: String
    /// Long side at most 2048 px: feeds and detail. Keeps an animation.
    public let large: ImageVariant
    /// Fits in 640×640: grids, avatars, previews. Always a still.
    public let small: ImageVariant

    public init(width: Int, height: Int, blurHash: String, large: ImageVariant, small: ImageVariant) {
        self.width = width
        self.height = height
        self.blurHash = blurHash
        self.large = large
        self.small = small
    }
}
