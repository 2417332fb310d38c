import Foundation

/// The BlurHash of an image (woltapp/blurhash): a few cosine components of its colours in base 83, from which a
/// client paints a blurred placeholder while the image loads.
public enum BlurHash {
    /// Encodes `pixels`, 8-bit sRGB with `channels` bytes a pixel (3 or 4; a fourth, alpha, is ignored), row by row,
    /// with `components` cosines across and down (each 1–9). A small image is enough: the hash holds only the lowest
    /// frequencies, so 32 pixels a side give the same string as the whole photo, far faster.
    public static func encode(
        pixels: [UInt8], width: Int, height: Int, channels: Int, components: (x: Int, y: Int) = (4, 3)
    ) -> String {
        precondition((1...9).contains(components.x) && (1...9).contains(components.y))
        precondition(pixels.count >= width * height * channels && width > 0 && height > 0)
        let linear = pixels.map { sRGBToLinear($0) }
        var factors: [(Double, Double, Double)] = []
        for j in 0..<components.y {
            for i in 0..<components.x {
                factors.append(factor(i, j, linear, width, height, channels))
            }
        }
        var hash = base83(components.x - 1 + (components.y - 1) * 9, digits: 1)
        let ac = factors.dropFirst()
        let maximum: Double
        if let largest = ac.map({ max(abs($0.0), abs($0.1), abs($0.2)) }).max() {
            let quantised = Int(max(0, min(82, (largest * 166 - 0.5).rounded(.down))))
            maximum = Double(quantised + 1) / 166
            hash += base83(quantised, digits: 1)
        } else {
            maximum = 1
            hash += base83(0, digits: 1)
        }
        let dc = factors[0]
        hash += base83(linearToSRGB(dc.0) << 16 | linearToSRGB(dc.1) << 8 | linearToSRGB(dc.2), digits: 4)
        for value in ac {
            func quantise(_ component: Double) -> Int {
                Int(max(0, min(18, (signedRoot(component / maximum) * 9 + 9.5).rounded(.down))))
            }
            hash += base83(quantise(value.0) * 19 * 19 + quantise(value.1) * 19 + quantise(value.2), digits: 2)
        }
        return hash
    }

    /// The weight of the cosine `i` across and `j` down in each colour channel.
    private static func factor(
        _ i: Int, _ j: Int, _ linear: [Double], _ width: Int, _ height: Int, _ channels: Int
    ) -> (Double, Double, Double) {
        var (r, g, b) = (0.0, 0.0, 0.0)
        for y in 0..<height {
            let vertical = cos(Double.pi * Double(j * y) / Double(height))
            for x in 0..<width {
                let basis = cos(Double.pi * Double(i * x) / Double(width)) * vertical
                let offset = (y * width + x) * channels
                r += basis * linear[offset]
                g += basis * linear[offset + 1]
                b += basis * linear[offset + 2]
            }
        }
        let scale = (i == 0 && j == 0 ? 1.0 : 2.0) / Double(width * height)
        return (r * scale, g * scale, b * scale)
    }

    private static func sRGBToLinear(_ value: UInt8) -> Double {
        let v = Double(value) / 255
        return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4)
    }

    private static func linearToSRGB(_ value: Double) -> Int {
        let v = max(0, min(1, value))
        let encoded = v <= 0.003_130_8 ? v * 12.92 : 1.055 * pow(v, 1 / 2.4) - 0.055
        return Int(encoded * 255 + 0.5)
    }

    private static func signedRoot(_ value: Double) -> Double {
        value < 0 ? -(-value).squareRoot() : value.squareRoot()
    }

    private static let alphabet = Array(
        "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~")

    private static func base83(_ value: Int, digits: Int) -> String {
        var characters: [Character] = []
        var divisor = 1
        for _ in 1..<max(digits, 1) { divisor *= 83 }
        for _ in 0..<digits {
            characters.append(alphabet[(value / divisor) % 83])
            divisor /= 83
        }
        return String(characters)
    }
}
