import AsyncHTTPClient
import ChorusDelivery
import ChorusDomain
import ChorusPushPeers
import Crypto
import Foundation
import Testing

@Suite("Push: sending to APNs over HTTP/2, against a local APNs")
struct APNsSenderTests {
    static func push(
        _ token: String, kind: PushPayload.Kind = .like, environment: PushEnvironment = .production,
        registeredAt: Date = Date()
    ) -> Push {
        Push(
            user: .make(), device: .make(), platform: .apns, environment: environment, token: token,
            registeredAt: Int64(registeredAt.timeIntervalSince1970 * 1000),
            expiresAt: Int64(Date().timeIntervalSince1970 * 1000) + Push.lifetime,
            payload: PushPayload(
                kind: kind, actorName: "Bo", notificationID: "n1", postID: "p1", userID: "u1", position: 42, badge: 3))
    }

    /// Runs `body` with a peer, the HTTP client pointed at it (trusting it through a CA file, as `CHORUS_PUSH_CA_FILE`
    /// makes it), and a maker of senders to it with a timeout. Timeouts are long but for a test of one: a run of every
    /// suite at once keeps the peer's tasks waiting for seconds.
    static func withSender(
        _ body: (_ sender: (Duration) async throws -> APNsSender, LocalAPNs, HTTPClient) async throws -> Void
    ) async throws {
        let authority = try LocalCertificateAuthority()
        let caFile = NSTemporaryDirectory() + "chorus-test-ca-\(UUID().uuidString).pem"
        try authority.caPEM.write(toFile: caFile, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: caFile) }
        let key = P256.Signing.PrivateKey()
        try await LocalAPNs.run(authority, checkingWith: key.publicKey) { peer in
            let client = try PushHTTPClient.make(trustingAlso: caFile)
            func sender(timeout: Duration) async throws -> APNsSender {
                var configuration = APNsConfiguration(
                    key: key.pemRepresentation, keyID: "KEY1234567", teamID: "TEAM123456", topic: "com.example.chorus")
                configuration.productionURL = "https://localhost:\(peer.port)"
                configuration.sandboxURL = "https://localhost:\(peer.port)/sandbox"
                configuration.timeout = timeout
                return try await APNsSender(configuration: configuration, client: client)
            }
            do {
                try await body(sender(timeout:), peer, client)
            } catch {
                try await client.shutdown()
                throw error
            }
            try await client.shutdown()
        }
    }

    @Test(
        "an alert goes over HTTP/2 with every header, a signed provider token and the payload; a badge update goes silent; a retry keeps its apns-id"
    )
    func headersAndPayload() async throws {
        try await Self.withSender { makeSender, peer, client in
            let sender = try await makeSender(.seconds(120))
            let health = try await client.execute(
                HTTPClientRequest(url: "https://localhost:\(peer.port)/health"), timeout: .seconds(120))
            #expect(health.version == .http2, "the client and the peer speak HTTP/2")

            let like = Self.push("a1b2")
            #expect(await sender.send(like) == .delivered)
            #expect(await sender.send(like) == .delivered)
            let badge = Self.push("c3d4", kind: .badge, environment: .sandbox)
            #expect(await sender.send(badge) == .delivered)

            let received = peer.received
            try #require(received.count == 3)
            let alert = received[0]
            #expect(!alert.sandbox && alert.token == "a1b2")
            #expect(alert.headers["apns-topic"] == "com.example.chorus")
            #expect(alert.headers["apns-push-type"] == "alert" && alert.headers["apns-priority"] == "10")
            #expect(alert.headers["apns-id"] == like.id.lowercased())
            #expect(received[1].headers["apns-id"] == like.id.lowercased(), "the same apns-id on every try")
            #expect(alert.headers["apns-collapse-id"] == "likes:p1")
            let expiration = try #require(alert.headers["apns-expiration"].flatMap(Int64.init))
            #expect(expiration == like.expiresAt / 1000)
            #expect(alert.keyID == "KEY1234567" && alert.claims["iss"] == "TEAM123456")
            #expect(alert.claims.keys.sorted() == ["iat", "iss"])
            let aps = try #require(alert.payload["aps"] as? [String: Any])
            #expect((aps["alert"] as? [String: Any])?["body"] as? String == "Bo liked your post")
            #expect(aps["badge"] as? Int == 3 && aps["sound"] as? String == "default")
            #expect(aps["mutable-content"] as? Int == 1)
            let chorus = try #require(alert.payload["chorus"] as? [String: Any])
            #expect(chorus["type"] as? String == "like" && chorus["position"] as? Int == 42)
            #expect(chorus["postId"] as? String == "p1" && chorus["notificationId"] as? String == "n1")

            let silent = received[2]
            #expect(silent.sandbox, "a sandbox device goes to the sandbox host")
            #expect(silent.headers["apns-push-type"] == "background" && silent.headers["apns-priority"] == "5")
            let silentAPS = try #require(silent.payload["aps"] as? [String: Any])
            #expect(silentAPS["content-available"] as? Int == 1 && silentAPS["alert"] == nil)
            #expect(silentAPS["badge"] as? Int == 3)
        }
    }

    @Test(
        "every answer is handled: 410 forgets the device (unless it registered again since), bad tokens too; 429 with Retry-After and 5xx retry; an expired provider token is sent again, renewed when 20 minutes old; a slow or closed endpoint retries"
    )
    func answers() async throws {
        try await Self.withSender { makeSender, peer, _ in
            let sender = try await makeSender(.seconds(120))
            // An hour either side of the 410's time: a loaded machine once took more than a minute to get there.
            let before = Date().addingTimeInterval(-3600)
            let after = Date().addingTimeInterval(3600)
            #expect(await sender.send(Self.push("gone", registeredAt: before)) == .forgetDevice(reason: "Unregistered"))
            #expect(await sender.send(Self.push("gone", registeredAt: after)) == .drop(reason: "Unregistered"))
            #expect(await sender.send(Self.push("bad")) == .forgetDevice(reason: "BadDeviceToken"))
            #expect(await sender.send(Self.push("busy")) == .retry(after: .seconds(7), reason: "TooManyRequests"))
            #expect(await sender.send(Self.push("broken")) == .retry(after: nil, reason: "InternalServerError"))
            #expect(await sender.send(Self.push("expired")) == .delivered, "sent again after the renewal")
            #expect(peer.received.filter { $0.token == "expired" }.count == 2)
            // An answer slower than the sender's timeout.
            guard case .retry = try await makeSender(.seconds(1)).send(Self.push("slow")) else {
                Issue.record("a slow answer is not a retry")
                return
            }
        }
        // Nothing listening: the connection is refused, and the push waits for another try.
        let client = try PushHTTPClient.make(trustingAlso: nil)
        var configuration = APNsConfiguration(
            key: P256.Signing.PrivateKey().pemRepresentation, keyID: "K", teamID: "T", topic: "com.example.chorus")
        configuration.productionURL = "https://localhost:1"
        let sender = try await APNsSender(configuration: configuration, client: client)
        guard case .retry = await sender.send(Self.push("a1")) else {
            Issue.record("a refused connection is not a retry")
            try await client.shutdown()
            return
        }
        try await client.shutdown()
    }
}
