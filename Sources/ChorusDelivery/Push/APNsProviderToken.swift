import Foundation
import JWTKit

/// The provider token that authenticates Chorus to APNs (token-based connections): a JWT signed ES256 with the team's
/// `.p8` key, header `{alg, kid}`, claims `{iss: team id, iat}`, sent as `authorization: bearer …` on every request.
///
/// Apple refuses a token older than an hour (403 `ExpiredProviderToken`) and one renewed more often than every 20
/// minutes (429 `TooManyProviderTokenUpdates`): one token serves for 55 minutes, and an `ExpiredProviderToken` renews
/// it early only when it is 20 minutes old or more. An actor, so that requests racing for an old token make one new
/// token, not one each.
package actor APNsProviderToken {
    /// How long a token is sent for: five minutes short of Apple's hour, for clocks that disagree.
    package static let lifetime: Duration = .seconds(55 * 60)
    /// The shortest time between two tokens that Apple takes.
    package static let shortestRenewal: Duration = .seconds(20 * 60)

    private struct Claims: JWTPayload {
        let iss: IssuerClaim
        let iat: IssuedAtClaim

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    private let keys = JWTKeyCollection()
    private let keyID: String
    private let teamID: String
    private var current: (token: String, issuedAt: Date)?

    /// A signer for the key in `pem` (the `.p8` file Apple's developer site gives, PKCS #8), named `keyID`, of the team
    /// `teamID`.
    package init(pem: String, keyID: String, teamID: String) async throws {
        self.keyID = keyID
        self.teamID = teamID
        let key = try ES256PrivateKey(pem: pem)
        await keys.add(ecdsa: key, kid: JWKIdentifier(string: keyID), serializer: DefaultJWTSerializer.wholeSeconds)
    }

    /// The token to send at `now`: the one in use while it is younger than ``lifetime``, else a new one.
    package func token(at now: Date) async throws -> String {
        if let current, Self.age(of: current.issuedAt, at: now) < Self.lifetime { return current.token }
        return try await make(at: now)
    }

    /// The token to send at `now` after APNs answered `ExpiredProviderToken` to `rejected`: a new one if `rejected` is
    /// still the one in use and is at least ``shortestRenewal`` old; otherwise the one in use (another request renewed
    /// it already, or Apple's clock disagrees with ours and a renewal now would be refused as too frequent).
    package func token(replacing rejected: String, at now: Date) async throws -> String {
        guard let current, current.token == rejected,
            Self.age(of: current.issuedAt, at: now) >= Self.shortestRenewal
        else { return try await token(at: now) }
        return try await make(at: now)
    }

    private static func age(of issuedAt: Date, at now: Date) -> Duration {
        .seconds(now.timeIntervalSince(issuedAt))
    }

    private func make(at now: Date) async throws -> String {
        let token = try await keys.sign(
            Claims(iss: IssuerClaim(value: teamID), iat: IssuedAtClaim(value: now)),
            kid: JWKIdentifier(string: keyID))
        current = (token, now)
        return token
    }
}
