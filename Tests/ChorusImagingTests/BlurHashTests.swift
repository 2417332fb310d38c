import ChorusImaging
import Testing

@Suite("BlurHash")
struct BlurHashTests {
    /// The reference strings are those of an independent implementation of woltapp's algorithm (the `blurhash`
    /// package from PyPI, `blurhash.encode(rows, 4, 3)`) for the same pixels.
    @Test("a pattern and a flat colour encode as the reference implementation encodes them")
    func matchesReference() {
        let (width, height) = (8, 6)
        var pattern: [UInt8] = []
        var flat: [UInt8] = []
        for y in 0..<height {
            for x in 0..<width {
                pattern += [
                    UInt8((x * 37 + y * 11) % 256), UInt8((x * 5 + y * 53) % 256), UInt8((x * x * 7 + y * 3) % 256),
                ]
                flat += [40, 120, 200]
            }
        }
        #expect(
            BlurHash.encode(pixels: pattern, width: width, height: height, channels: 3)
                == "LmGS0%J{5~=#vqNYa_wPQLjEoLV|")
        #expect(
            BlurHash.encode(pixels: flat, width: width, height: height, channels: 3) == "LV4r1CkufQkupMkDfQkDfQfQfQfQ")
    }

    @Test("a fourth channel, alpha, is skipped")
    func skipsAlpha() {
        let rgb: [UInt8] = Array(repeating: [40, 120, 200], count: 12).flatMap { $0 }
        let rgba: [UInt8] = Array(repeating: [40, 120, 200, 7], count: 12).flatMap { $0 }
        #expect(
            BlurHash.encode(pixels: rgba, width: 4, height: 3, channels: 4)
                == BlurHash.encode(pixels: rgb, width: 4, height: 3, channels: 3))
    }
}
