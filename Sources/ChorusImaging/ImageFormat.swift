/// What an upload claims to be, and the libvips loaders that may read it: bytes another loader recognises are not an
/// image of the claimed type, and no other loader (SVG, PDF, TIFF, ...) ever sees an upload.
public enum UploadFormat: String, Sendable, CaseIterable {
    case jpeg = "image/jpeg"
    case png = "image/png"
    case gif = "image/gif"
    case webp = "image/webp"
    case heic = "image/heic"
    case heif = "image/heif"
    case avif = "image/avif"

    var loaders: Set<String> {
        switch self {
        case .jpeg: ["VipsForeignLoadJpegBuffer"]
        case .png: ["VipsForeignLoadPngBuffer"]
        case .gif: ["VipsForeignLoadNsgifBuffer"]
        case .webp: ["VipsForeignLoadWebpBuffer"]
        case .heic, .heif, .avif: ["VipsForeignLoadHeifBuffer"]
        }
    }

    /// Whether the type can hold an animation, kept in the `large` variant.
    var mayBeAnimated: Bool { self == .gif || self == .webp }
}

/// The formats the pipeline writes, and so the only ones served.
public enum ImageFormat: String, Sendable, CaseIterable, Codable {
    case jpeg = "image/jpeg"
    case png = "image/png"
    case gif = "image/gif"
    case webp = "image/webp"

    public var fileExtension: String {
        switch self {
        case .jpeg: "jpg"
        case .png: "png"
        case .gif: "gif"
        case .webp: "webp"
        }
    }
}
