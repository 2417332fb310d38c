import Foundation

/// A picture for the demo's photo posts, drawn from a seed: a sky fading into its horizon colour, a sun, and a range
/// of hills, in 8-bit RGB. Small and plain, so that a demo of thousands of posts is made in seconds; different for
/// each seed, so that no two photos of the demo share an id.
public struct DemoPicture: Sendable {
    public static let width = 320
    public static let height = 240

    /// What the picture shows, in a few words: the alt text the demo's authors give it (most of the time).
    public let description: String
    private let sky: (top: RGB, horizon: RGB)
    private let hills: RGB
    private let sun: (x: Int, y: Int, radius: Int)
    private let ridge: (height: Double, waves: Double, phase: Double)

    private struct RGB: Hashable {
        let red: Double, green: Double, blue: Double
    }

    private static let times: [(name: String, top: RGB, horizon: RGB)] = [
        ("Dawn", RGB(red: 40, green: 60, blue: 120), RGB(red: 250, green: 170, blue: 120)),
        ("Noon", RGB(red: 60, green: 130, blue: 220), RGB(red: 190, green: 225, blue: 250)),
        ("Dusk", RGB(red: 50, green: 30, blue: 90), RGB(red: 240, green: 110, blue: 70)),
        ("A grey morning", RGB(red: 120, green: 130, blue: 140), RGB(red: 200, green: 200, blue: 205)),
    ]

    private static let lands: [(name: String, colour: RGB)] = [
        ("green hills", RGB(red: 60, green: 120, blue: 60)),
        ("dunes", RGB(red: 200, green: 160, blue: 100)),
        ("dark ridges", RGB(red: 40, green: 45, blue: 60)),
        ("snowy peaks", RGB(red: 230, green: 235, blue: 245)),
    ]

    public init(seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        let time = Self.times.randomElement(using: &generator)!
        let land = Self.lands.randomElement(using: &generator)!
        description = "\(time.name) over \(land.name)"
        sky = (time.top, time.horizon)
        hills = land.colour
        sun = (
            Int.random(in: 40..<(Self.width - 40), using: &generator),
            Int.random(in: 40..<(Self.height / 2), using: &generator), Int.random(in: 12...36, using: &generator)
        )
        ridge = (
            Double.random(in: 0.55...0.8, using: &generator), Double.random(in: 1...4, using: &generator),
            Double.random(in: 0..<6.28, using: &generator)
        )
    }

    /// The picture as a PNG file whose zlib stream holds the rows uncompressed (stored blocks): as a camera's file
    /// would be, it is only the pipeline's input, which writes it anew as JPEG.
    public func png() -> [UInt8] {
        let pixels = rgb()
        var rows: [UInt8] = []
        rows.reserveCapacity(pixels.count + Self.height)
        for y in 0..<Self.height {
            rows.append(0)  // no filter
            rows.append(contentsOf: pixels[(y * Self.width * 3)..<((y + 1) * Self.width * 3)])
        }
        var zlib: [UInt8] = [0x78, 0x01]
        var start = 0
        while start < rows.count {
            let end = min(start + 65_535, rows.count)
            let length = UInt16(end - start)
            zlib.append(end == rows.count ? 1 : 0)
            zlib += [UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8(~length >> 8)]
            zlib += rows[start..<end]
            start = end
        }
        zlib += Self.bigEndian(Self.adler32(rows))
        var header = Self.bigEndian(UInt32(Self.width)) + Self.bigEndian(UInt32(Self.height))
        header += [8, 2, 0, 0, 0]  // 8 bits, RGB, deflate, no filter method, no interlace
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Self.chunk("IHDR", header) + Self.chunk("IDAT", zlib)
            + Self.chunk("IEND", [])
    }

    private static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typed = Array(type.utf8) + data
        return bigEndian(UInt32(data.count)) + typed + bigEndian(crc32(typed))
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    /// PNG's CRC-32 (ISO 3309), a byte at a time.
    private static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = crcTable[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return ~crc
    }

    private static let crcTable: [UInt32] = (0..<256).map { index in
        var crc = UInt32(index)
        for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        return crc
    }

    private static func adler32(_ bytes: [UInt8]) -> UInt32 {
        var (a, b): (UInt32, UInt32) = (1, 0)
        for byte in bytes {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        return b << 16 | a
    }

    /// The pixels, row by row, three bytes each.
    public func rgb() -> [UInt8] {
        var pixels = [UInt8](repeating: 0, count: Self.width * Self.height * 3)
        for y in 0..<Self.height {
            let fade = Double(y) / Double(Self.height)
            for x in 0..<Self.width {
                let across = Double(x) / Double(Self.width)
                let ground =
                    Double(Self.height) * (ridge.height + 0.08 * sin(across * ridge.waves * 6.28 + ridge.phase))
                let (dx, dy) = (x - sun.x, y - sun.y)
                let colour: RGB
                if Double(y) > ground {
                    // Darker further down.
                    let shade = 1 - 0.4 * (Double(y) - ground) / Double(Self.height)
                    colour = RGB(red: hills.red * shade, green: hills.green * shade, blue: hills.blue * shade)
                } else if dx * dx + dy * dy <= sun.radius * sun.radius {
                    colour = RGB(red: 255, green: 235, blue: 160)
                } else {
                    colour = RGB(
                        red: sky.top.red + (sky.horizon.red - sky.top.red) * fade,
                        green: sky.top.green + (sky.horizon.green - sky.top.green) * fade,
                        blue: sky.top.blue + (sky.horizon.blue - sky.top.blue) * fade)
                }
                let at = (y * Self.width + x) * 3
                pixels[at] = UInt8(max(0, min(255, colour.red)))
                pixels[at + 1] = UInt8(max(0, min(255, colour.green)))
                pixels[at + 2] = UInt8(max(0, min(255, colour.blue)))
            }
        }
        return pixels
    }
}
