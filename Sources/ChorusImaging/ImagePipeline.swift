import CVipsCalls

/// Turns an upload into what Chorus stores: decoded by libvips with its size checked from the header before any
/// pixel is allocated, turned upright, converted to 8-bit sRGB, and written anew as `large` and `small` with no
/// metadata at all (EXIF with its GPS position, XMP, IPTC, comments, embedded thumbnails, profiles).
///
/// Runs only in `chorus media process`, a child process with limits of its own (``ImageWorkerPool``'s): a crafted
/// file that crashes a decoder or runs away crashes that child, never the server.
public enum ImagePipeline {
    /// Starts libvips for this process; call once, before ``process(_:claimed:limits:)``.
    public static func start() throws {
        guard chorus_vips_start("chorus") == 0 else { throw ImageRefusal.invalid(lastError()) }
    }

    public static func process(
        _ bytes: [UInt8], claimed: UploadFormat, limits: ImageLimits = ImageLimits()
    ) throws(ImageRefusal) -> ProcessedImage {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(ImageRefusal) in try process(buffer, claimed: claimed, limits: limits) }
        }
        return try result.get()
    }

    private static func process(
        _ bytes: UnsafeRawBufferPointer, claimed: UploadFormat, limits: ImageLimits
    ) throws(ImageRefusal) -> ProcessedImage {
        guard let loader = chorus_vips_loader(bytes.baseAddress, bytes.count).map({ String(cString: $0) }),
            claimed.loaders.contains(loader)
        else { throw .invalid("the bytes are not a \(claimed.rawValue) image") }
        let header = try checkedHeader(bytes, claimed: claimed, limits: limits)
        let large = try VipsImage(
            chorus_vips_thumbnail(
                bytes.baseAddress, bytes.count, Int32(limits.largeSide), header.animated ? 1 : 0,
                header.hasProfile ? 1 : 0))
        let keepsAlpha = claimed == .png && chorus_vips_has_alpha(large.pointer) != 0
        let largeColour = try VipsImage(chorus_vips_srgb(large.pointer, header.animated || keepsAlpha ? 1 : 0))
        let firstFrame = header.animated ? try VipsImage(chorus_vips_first_frame(largeColour.pointer)) : largeColour
        let small = try VipsImage(chorus_vips_shrink(firstFrame.pointer, Int32(limits.smallSide)))
        let smallColour = try VipsImage(chorus_vips_srgb(small.pointer, keepsAlpha ? 1 : 0))
        let largeFormat: ImageFormat =
            header.animated ? (claimed == .gif ? .gif : .webp) : (keepsAlpha ? .png : .jpeg)
        return ProcessedImage(
            width: header.width, height: header.height,
            blurHash: try blurHash(of: firstFrame, side: limits.blurHashSide),
            large: try largeColour.variant(largeFormat),
            small: try smallColour.variant(keepsAlpha ? .png : .jpeg))
    }

    /// The upright size, whether to keep an animation and whether there is a colour profile to convert from, read
    /// from the header alone; refuses what is past the limits.
    private static func checkedHeader(
        _ bytes: UnsafeRawBufferPointer, claimed: UploadFormat, limits: ImageLimits
    ) throws(ImageRefusal) -> (width: Int, height: Int, animated: Bool, hasProfile: Bool) {
        let image = try VipsImage(chorus_vips_open(bytes.baseAddress, bytes.count, claimed.mayBeAnimated ? 1 : 0))
        let width = Int(chorus_vips_width(image.pointer))
        let frameHeight = Int(chorus_vips_page_height(image.pointer))
        let frames = claimed.mayBeAnimated ? max(1, Int(chorus_vips_pages(image.pointer))) : 1
        guard frames <= limits.maximumFrames else {
            throw .tooLarge("the image has \(frames) frames; at most \(limits.maximumFrames) are taken")
        }
        guard width <= limits.maximumSide, frameHeight <= limits.maximumSide else {
            throw .tooLarge("the image is \(width)×\(frameHeight); at most \(limits.maximumSide) px a side are taken")
        }
        guard width * frameHeight * frames <= limits.maximumPixels else {
            throw .tooLarge("the image has \(width * frameHeight * frames) pixels; at most \(limits.maximumPixels)")
        }
        let swaps = chorus_vips_orientation_swaps(image.pointer) != 0
        let hasProfile = chorus_vips_has_profile(image.pointer) != 0
        return (swaps ? frameHeight : width, swaps ? width : frameHeight, frames > 1, hasProfile)
    }

    private static func blurHash(of image: VipsImage, side: Int) throws(ImageRefusal) -> String {
        let tiny = try VipsImage(chorus_vips_shrink(image.pointer, Int32(side)))
        let colour = try VipsImage(chorus_vips_srgb(tiny.pointer, 0))
        let pixels = try colour.pixels()
        let width = Int(chorus_vips_width(colour.pointer))
        let height = Int(chorus_vips_height(colour.pointer))
        return BlurHash.encode(pixels: pixels, width: width, height: height, channels: pixels.count / (width * height))
    }

    static func lastError() -> String {
        var buffer = [CChar](repeating: 0, count: 512)
        chorus_vips_error(&buffer, buffer.count)
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let message = text.split(separator: "\n").first.map(String.init) ?? ""
        return message.isEmpty ? "the image could not be decoded" : "the image could not be decoded: \(message)"
    }
}

/// A libvips image this process holds; released with the value.
final class VipsImage {
    let pointer: OpaquePointer

    /// Takes `pointer`, or refuses the image with libvips' error when it is NULL.
    init(_ pointer: OpaquePointer?) throws(ImageRefusal) {
        guard let pointer else { throw .invalid(ImagePipeline.lastError()) }
        self.pointer = pointer
    }

    deinit { chorus_vips_release(pointer) }

    func variant(_ format: ImageFormat) throws(ImageRefusal) -> ImageVariant {
        let chorusFormat: ChorusVipsFormat =
            switch format {
            case .jpeg: CHORUS_VIPS_JPEG
            case .png: CHORUS_VIPS_PNG
            case .gif: CHORUS_VIPS_GIF
            case .webp: CHORUS_VIPS_WEBP
            }
        let bytes = try copied { chorus_vips_save(pointer, chorusFormat, &$0, &$1) }
        return ImageVariant(
            format: format, width: Int(chorus_vips_width(pointer)), height: Int(chorus_vips_page_height(pointer)),
            bytes: bytes)
    }

    func pixels() throws(ImageRefusal) -> [UInt8] { try copied { chorus_vips_pixels(pointer, &$0, &$1) } }

    private func copied(
        _ call: (inout UnsafeMutableRawPointer?, inout Int) -> Int32
    ) throws(ImageRefusal) -> [UInt8] {
        var bytes: UnsafeMutableRawPointer?
        var length = 0
        guard call(&bytes, &length) == 0, let bytes else { throw .invalid(ImagePipeline.lastError()) }
        defer { chorus_vips_free(bytes) }
        return Array(UnsafeRawBufferPointer(start: bytes, count: length))
    }
}
