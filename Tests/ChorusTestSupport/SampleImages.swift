import Foundation

/// Real image files for the tests, in Images/ beside this file.
///
/// `photo.*` (320×240, the PNG 160×120) carry every kind of metadata the pipeline must remove: GPS position and
/// camera (EXIF, `SECRETCAM`, `SECRETARTIST`), XMP (`SECRETXMP`), IPTC (`SECRETIPTC`), a comment (`SECRETCOMMENT`);
/// the JPEG also has orientation 6 (a quarter turn) and `thumb.jpg` embedded as its EXIF thumbnail. `animated.gif` is
/// three 80×60 frames, `alpha.png` 64×48 with transparency, `tiny.png` 24×16.
public enum SampleImages {
    public static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Images")

    public static func bytes(_ name: String) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: directory.appendingPathComponent(name).path) else {
            fatalError("no sample image \(name) in \(directory.path)")
        }
        return Array(data)
    }

    /// A small valid PNG, for tests that need an image but not what is in it.
    public static let png = bytes("tiny.png")

    /// ``png`` with `text` in a `tEXt` chunk (metadata, which the pipeline removes).
    public static func png(withText text: String) -> [UInt8] {
        let afterHeader = 8 + 25
        return Array(png[..<afterHeader]) + pngChunk("tEXt", Array("Comment".utf8) + [0] + Array(text.utf8))
            + Array(png[afterHeader...])
    }

    /// A PNG whose header claims `width`×`height` pixels, with one tiny compressed row: decoding it whole would
    /// allocate gigabytes.
    public static func pngBomb(width: UInt32, height: UInt32) -> [UInt8] {
        let header = bigEndian(width) + bigEndian(height) + [8, 2, 0, 0, 0]
        let data: [UInt8] = [0x78, 0x9C, 0x63, 0x60, 0x00, 0x00, 0x00, 0x02, 0x00, 0x01]
        return Array(png.prefix(8)) + pngChunk("IHDR", header) + pngChunk("IDAT", data) + pngChunk("IEND", [])
    }

    /// A PNG chunk: its length, type, data and CRC.
    public static func pngChunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        return bigEndian(UInt32(data.count)) + body + bigEndian(crc32(body))
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) }
    }

    private static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    /// The marker strings the `photo.*` files' metadata holds.
    public static let metadataMarkers = ["SECRETCAM", "SECRETARTIST", "SECRETXMP", "SECRETIPTC", "SECRETCOMMENT"]
}
