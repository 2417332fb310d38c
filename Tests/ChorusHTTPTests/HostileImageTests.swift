import ChorusDemo
import ChorusTestSupport
import Foundation
import HTTPTypes
import Testing

/// Mutated images by the thousand (`CHORUS_IMAGE_FUZZ_CASES`, 1,200 by default) from real JPEG, PNG, GIF, WebP and
/// HEIC files: bytes flipped, cut short, zeroed, repeated, sizes in headers made huge. Each is stored, or refused as
/// `invalid_image` or `image_too_large`, never anything else, and the server answers other requests throughout.
@Suite("Hostile images")
struct HostileImageTests {
    static let seeds: [(file: String, type: String)] = [
        ("photo.jpg", "image/jpeg"), ("photo.png", "image/png"), ("alpha.png", "image/png"),
        ("animated.gif", "image/gif"), ("photo.webp", "image/webp"), ("photo.heic", "image/heic"),
    ]

    @Test("mutated images are stored or refused as invalid or too large, and the server keeps answering")
    func mutatedImages() async throws {
        let cases = ProcessInfo.processInfo.environment["CHORUS_IMAGE_FUZZ_CASES"].flatMap(Int.init) ?? 1_200
        try await withAPI { api in
            let ana = try await api.register("Ana")
            var generator = SeededGenerator(seed: 57)
            let uploads = (0..<cases).map { number in
                let seed = Self.seeds[number % Self.seeds.count]
                return (seed, Self.mutate(SampleImages.bytes(seed.file), &generator))
            }
            var answers: [String: Int] = [:]
            // Four at a time: within the pool's queue, so that every answer is the pipeline's.
            try await withThrowingTaskGroup(of: (String, String).self) { group in
                for (index, (seed, bytes)) in uploads.enumerated() {
                    if index >= 4, let (file, answer) = try await group.next() {
                        answers["\(file) \(answer)", default: 0] += 1
                    }
                    group.addTask {
                        let upload = try await api.call(
                            .post, "/v1/media", token: ana.token, body: bytes, headers: ["Content-Type": seed.type])
                        let answer = upload.status == .created ? "stored" : upload.errorCode ?? "\(upload.status)"
                        return (seed.file, answer)
                    }
                    if index % 100 == 0 {
                        #expect(try await api.call(.get, "/v1/me", token: ana.token).status == .ok)
                    }
                }
                for try await (file, answer) in group { answers["\(file) \(answer)", default: 0] += 1 }
            }
            let unexpected = answers.filter {
                !["stored", "invalid_image", "image_too_large"].contains($0.key.split(separator: " ").last ?? "")
            }
            #expect(unexpected.isEmpty, "answers other than stored or refused: \(unexpected)")
            #expect(answers.values.reduce(0, +) == cases)
            #expect(answers.keys.contains { $0.hasSuffix("invalid_image") }, "\(answers)")
            #expect(try await api.call(.get, "/health").status == .ok)
        }
    }

    /// One to three mutations of `bytes`.
    static func mutate(_ bytes: [UInt8], _ random: inout SeededGenerator) -> [UInt8] {
        var bytes = bytes
        for _ in 0..<Int.random(in: 1...3, using: &random) {
            guard bytes.count > 16 else { break }
            let at = Int.random(in: 0..<bytes.count, using: &random)
            switch Int.random(in: 0..<6, using: &random) {
            case 0:
                for _ in 0..<Int.random(in: 1...16, using: &random) {
                    bytes[Int.random(in: 0..<bytes.count, using: &random)] ^= UInt8.random(in: 1...255, using: &random)
                }
            case 1: bytes.removeSubrange(at...)
            case 2: bytes.replaceSubrange(at..<min(bytes.count, at + 64), with: repeatElement(0, count: 64))
            case 3: bytes.insert(contentsOf: bytes[at..<min(bytes.count, at + 512)], at: at)
            case 4:
                // The first header field that looks like a size, made huge: a pixel flood.
                let field = min(at, 32)
                bytes.replaceSubrange(field..<field + 4, with: [0x7F, 0xFF, 0xFF, 0xFF])
            default:
                bytes.insert(contentsOf: (0..<32).map { _ in UInt8.random(in: 0...255, using: &random) }, at: at)
            }
        }
        return bytes
    }
}
