import ChorusDelivery
import Crypto
import Foundation
import Testing

@Suite("Push: the APNs provider token")
struct APNsProviderTokenTests {
    private static let key = P256.Signing.PrivateKey()
    private static let start = Date(timeIntervalSince1970: 1_800_000_000.75)

    /// The token's header and claims, after checking its signature with the public key, as APNs does.
    private static func verified(_ token: String) throws -> (header: [String: Any], claims: [String: Any]) {
        let parts = token.split(separator: ".").map(String.init)
        try #require(parts.count == 3)
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: try base64URLDecoded(parts[2]))
        #expect(key.publicKey.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8)))
        let header = try #require(
            try JSONSerialization.jsonObject(with: try base64URLDecoded(parts[0])) as? [String: Any])
        let claims = try #require(
            try JSONSerialization.jsonObject(with: try base64URLDecoded(parts[1])) as? [String: Any])
        return (header, claims)
    }

    private static func minutes(_ count: Double) -> Date { start.addingTimeInterval(count * 60) }

    @Test(
        "ES256 under the team's key: header alg and kid, claims iss and iat in whole seconds, checked with the public key"
    )
    func signed() async throws {
        let signer = try await APNsProviderToken(
            pem: Self.key.pemRepresentation, keyID: "KEY1234567", teamID: "TEAM123456")
        let (header, claims) = try Self.verified(try await signer.token(at: Self.start))
        #expect(header["alg"] as? String == "ES256" && header["kid"] as? String == "KEY1234567")
        #expect(claims.count == 2)
        #expect(claims["iss"] as? String == "TEAM123456")
        #expect(claims["iat"] as? Int == 1_800_000_000)
    }

    @Test("one token for 55 minutes, then a new one; ExpiredProviderToken renews it only once it is 20 minutes old")
    func lifetime() async throws {
        let signer = try await APNsProviderToken(pem: Self.key.pemRepresentation, keyID: "K", teamID: "T")
        let first = try await signer.token(at: Self.minutes(0))
        #expect(try await signer.token(at: Self.minutes(54.9)) == first)
        let second = try await signer.token(at: Self.minutes(55))
        #expect(second != first)
        #expect(try Self.verified(second).claims["iat"] as? Int == 1_800_003_300)

        // Refused as expired 10 minutes after it was made: Apple's clock is off, and a renewal would be too soon.
        #expect(try await signer.token(replacing: second, at: Self.minutes(65)) == second)
        // A rejection of the token before it changes nothing either: the one in use is newer.
        #expect(try await signer.token(replacing: first, at: Self.minutes(80)) == second)
        let third = try await signer.token(replacing: second, at: Self.minutes(75))
        #expect(third != second)
        #expect(try Self.verified(third).claims["iat"] as? Int == 1_800_004_500)
        #expect(try await signer.token(at: Self.minutes(129)) == third)
    }

    @Test("a key that is not a P-256 private key in PEM is refused")
    func badKey() async throws {
        await #expect(throws: (any Error).self) {
            try await APNsProviderToken(
                pem: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----", keyID: "K", teamID: "T")
        }
        await #expect(throws: (any Error).self) {
            try await APNsProviderToken(pem: P384.Signing.PrivateKey().pemRepresentation, keyID: "K", teamID: "T")
        }
    }
}
