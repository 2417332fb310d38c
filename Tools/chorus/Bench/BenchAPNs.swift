import ChorusPushPeers
import Crypto

/// A local APNs for a benchmark's server: a certificate authority and a team key of its own, written to a work
/// directory, the peer listening in this process, and the variables that make `chorus serve` push to it.
struct BenchAPNs {
    static let keyID = "BENCHKEY01"
    static let teamID = "BENCHTEAM1"
    static let topic = "com.example.bench"

    let peer: LocalAPNs
    /// The team key the peer checks provider tokens with.
    let key: P256.Signing.PrivateKey
    /// What `chorus serve` is started with to push to the peer.
    let serverEnvironment: [String: String]

    /// Runs `body` with the peer listening, its files in `directory`; stops it after.
    static func run(in directory: String, _ body: (BenchAPNs) async throws -> Void) async throws {
        let authority = try LocalCertificateAuthority()
        let key = P256.Signing.PrivateKey()
        let (caFile, keyFile) = (directory + "/ca.pem", directory + "/AuthKey.p8")
        try authority.caPEM.write(toFile: caFile, atomically: true, encoding: .utf8)
        try key.pemRepresentation.write(toFile: keyFile, atomically: true, encoding: .utf8)
        try await LocalAPNs.run(authority, checkingWith: key.publicKey) { peer in
            try await body(
                BenchAPNs(
                    peer: peer, key: key,
                    serverEnvironment: [
                        "CHORUS_APNS_KEY_FILE": keyFile, "CHORUS_APNS_KEY_ID": keyID, "CHORUS_APNS_TEAM_ID": teamID,
                        "CHORUS_APNS_TOPIC": topic, "CHORUS_APNS_URL": "https://localhost:\(peer.port)",
                        "CHORUS_PUSH_CA_FILE": caFile,
                    ]))
        }
    }
}
