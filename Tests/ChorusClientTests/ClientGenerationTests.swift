import Crypto
import Foundation
import Testing

@Suite("Client SDK: generated layer")
struct ClientGenerationTests {
    /// The repository's root, from this file's place in it.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test(
        "the committed generated client was generated from the openapi.yaml of this commit (else: Scripts/generate-client)"
    )
    func generatedFromTheCurrentContract() throws {
        let contract = try Data(contentsOf: Self.root.appendingPathComponent("openapi.yaml"))
        let digest = SHA256.hash(data: contract).map { String(format: "%02x", $0) }.joined()
        let recorded = try String(
            contentsOf: Self.root.appendingPathComponent("Sources/ChorusClient/Generated/openapi.yaml.sha256"),
            encoding: .utf8
        ).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(
            recorded == digest,
            "openapi.yaml changed since Sources/ChorusClient/Generated was: run Scripts/generate-client")
    }
}
