/// What an upload may be, decoded, and the sizes the pipeline makes: the contract's figures.
public struct ImageLimits: Sendable {
    /// Pixels of every frame together: a 50-megapixel photo, or an animation of that many pixels in all.
    public var maximumPixels = 50_000_000
    public var maximumSide = 10_000
    public var maximumFrames = 200
    /// The `large` variant's longest side.
    public var largeSide = 2048
    /// The box the `small` variant fits in.
    public var smallSide = 640
    /// The side of the copy the BlurHash is computed from.
    public var blurHashSide = 32

    public init() {}
}

/// Why an upload was refused: the API's `invalid_image` and `image_too_large`.
public enum ImageRefusal: Error, Equatable, CustomStringConvertible {
    case invalid(String)
    case tooLarge(String)

    public var description: String {
        switch self {
        case .invalid(let reason), .tooLarge(let reason): reason
        }
    }
}
