import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOSSL

/// Where APNs is and who sends to it: the `.p8` key with its id, the team and the app's bundle id
/// (`CHORUS_APNS_KEY_FILE`, `CHORUS_APNS_KEY_ID`, `CHORUS_APNS_TEAM_ID`, `CHORUS_APNS_TOPIC`), and the two hosts
/// (`CHORUS_APNS_URL`, `CHORUS_APNS_SANDBOX_URL`).
package struct APNsConfiguration: Sendable {
    /// The `.p8` key's PEM text.
    package var key: String
    package var keyID: String
    package var teamID: String
    package var topic: String
    package var productionURL = "https://api.push.apple.com"
    package var sandboxURL = "https://api.sandbox.push.apple.com"
    /// An answer slower than this counts as a failure, tried again.
    package var timeout: Duration = .seconds(10)

    package init(key: String, keyID: String, teamID: String, topic: String) {
        (self.key, self.keyID, self.teamID, self.topic) = (key, keyID, teamID, topic)
    }

    /// Whether `pem` is a key APNs' provider tokens can be signed with: a P-256 private key, as in the `.p8` file.
    package static func isSigningKey(_ pem: String) -> Bool {
        (try? P256.Signing.PrivateKey(pemRepresentation: pem)) != nil
    }
}

/// Sends pushes to APNs: HTTP/2 through AsyncHTTPClient (which takes HTTP/2 by ALPN, many streams over one
/// connection), authenticated by a provider token that is reused, and renewed when APNs says it expired.
package final class APNsSender: Sendable {
    private let configuration: APNsConfiguration
    private let providerToken: APNsProviderToken
    private let client: HTTPClient

    package init(configuration: APNsConfiguration, client: HTTPClient) async throws {
        self.configuration = configuration
        self.client = client
        providerToken = try await APNsProviderToken(
            pem: configuration.key, keyID: configuration.keyID, teamID: configuration.teamID)
    }

    /// Sends `push` and says what its answer asks. An expired provider token is renewed and the push sent once more; a
    /// connection refused, a timeout or a reset is a retry.
    package func send(_ push: Push) async -> PushOutcome {
        await PushOutcome.attempting(
            with: { try await providerToken.token(at: Date()) },
            renewed: { try await providerToken.token(replacing: $0, at: Date()) }, refusal: "ExpiredProviderToken",
            attempt: { try await attempt(push, bearer: $0) })
    }

    private func attempt(_ push: Push, bearer: String) async throws -> PushOutcome {
        let request = APNsRequest(
            deviceToken: push.token, topic: configuration.topic,
            pushType: push.payload.kind == .badge ? .background : .alert, id: UUID(uuidString: push.id) ?? UUID(),
            collapseID: push.payload.collapseID,
            expiration: Date(timeIntervalSince1970: Double(push.expiresAt) / 1000), payload: push.payload.apns())
        let base = push.environment == .sandbox ? configuration.sandboxURL : configuration.productionURL
        let response = try await client.execute(
            request.httpRequest(base: base, bearer: bearer),
            timeout: .milliseconds(WebhookConfiguration.milliseconds(configuration.timeout)))
        let body = try await response.body.collect(upTo: 64 * 1024)
        return PushOutcome(
            apnsStatus: Int(response.status.code), body: Array(body.readableBytesView),
            retryAfter: response.headers.first(name: "retry-after"),
            deviceRegisteredAt: Date(timeIntervalSince1970: Double(push.registeredAt) / 1000))
    }
}

/// The HTTP client pushes go through: HTTP/2 where the peer takes it, trusting the system's roots and, for tests and
/// private gateways, the one in `CHORUS_PUSH_CA_FILE`.
package enum PushHTTPClient {
    package static func make(trustingAlso caFile: String?) throws -> HTTPClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let caFile {
            tls.additionalTrustRoots = [.certificates(try NIOSSLCertificate.fromPEMFile(caFile))]
        }
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        configuration.httpVersion = .automatic
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }
}
