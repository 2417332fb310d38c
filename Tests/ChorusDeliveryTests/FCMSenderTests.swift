import AsyncHTTPClient
import ChorusDelivery
import ChorusDomain
import ChorusPushPeers
import CryptoExtras
import Foundation
import Testing

@Suite("Push: sending through FCM's HTTP v1 API, against a local FCM")
struct FCMSenderTests {
    static func push(_ token: String, kind: PushPayload.Kind = .like) -> Push {
        Push(
            user: .make(), device: .make(), platform: .fcm, environment: .production, token: token,
            registeredAt: Int64(Date().timeIntervalSince1970 * 1000),
            expiresAt: Int64(Date().timeIntervalSince1970 * 1000) + Push.lifetime,
            payload: PushPayload(
                kind: kind, actorName: "Bo", notificationID: "n1", postID: "p1", userID: "u1", position: 42, badge: 3))
    }

    /// Runs `body` with a peer and a sender to it, trusting it through a CA file as `CHORUS_PUSH_CA_FILE` makes it.
    static func withSender(_ body: (FCMSender, LocalFCM, HTTPClient) async throws -> Void) async throws {
        let authority = try LocalCertificateAuthority()
        let caFile = NSTemporaryDirectory() + "chorus-test-ca-\(UUID().uuidString).pem"
        try authority.caPEM.write(toFile: caFile, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: caFile) }
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        try await LocalFCM.run(authority, checkingWith: key.publicKey) { peer in
            let client = try PushHTTPClient.make(trustingAlso: caFile)
            do {
                var configuration = FCMConfiguration(
                    account: try FCMServiceAccount(
                        json: peer.serviceAccount(project: "chorus-test", privateKeyPEM: key.pemRepresentation)))
                configuration.url = "https://localhost:\(peer.port)"
                configuration.timeout = .seconds(120)
                try await body(try await FCMSender(configuration: configuration, client: client), peer, client)
            } catch {
                try await client.shutdown()
                throw error
            }
            try await client.shutdown()
        }
    }

    @Test(
        "a message goes with the notification, the data and the collapse key, under an access token the service account's assertion got, reused"
    )
    func message() async throws {
        try await Self.withSender { sender, peer, client in
            let health = try await client.execute(
                HTTPClientRequest(url: "https://localhost:\(peer.port)/v1/projects/p/other"), timeout: .seconds(120))
            #expect(health.version == .http2, "the client and the peer speak HTTP/2")
            #expect(await sender.send(Self.push("fcm-token-1")) == .delivered)
            #expect(await sender.send(Self.push("fcm-token-2", kind: .badge)) == .delivered)
            let received = peer.received
            try #require(received.count == 2)
            #expect(received[0].project == "chorus-test" && received[0].token == "fcm-token-1")
            #expect(peer.accessTokens.count == 1, "one access token serves both")
            #expect(received.allSatisfy { $0.accessToken == peer.accessTokens.first })
            let like = received[0].message
            #expect((like["notification"] as? [String: Any])?["body"] as? String == "Bo liked your post")
            let data = try #require(like["data"] as? [String: String])
            #expect(data["type"] == "like" && data["position"] == "42" && data["badge"] == "3")
            #expect(data["postId"] == "p1" && data["notificationId"] == "n1" && data["userId"] == "u1")
            #expect((like["android"] as? [String: Any])?["collapse_key"] as? String == "likes:p1")
            let badge = received[1].message
            #expect(badge["notification"] == nil, "a badge update shows nothing")
            #expect((badge["data"] as? [String: String])?["type"] == "badge")
        }
    }

    @Test(
        "every answer is handled: UNREGISTERED and INVALID_ARGUMENT on the token forget the device; 429 with Retry-After and 500 retry; a revoked access token is renewed and the message sent again"
    )
    func answers() async throws {
        try await Self.withSender { sender, peer, _ in
            #expect(await sender.send(Self.push("gone")) == .forgetDevice(reason: "UNREGISTERED"))
            #expect(await sender.send(Self.push("bad")) == .forgetDevice(reason: "INVALID_ARGUMENT"))
            #expect(await sender.send(Self.push("busy")) == .retry(after: .seconds(7), reason: "QUOTA_EXCEEDED"))
            #expect(await sender.send(Self.push("broken")) == .retry(after: nil, reason: "INTERNAL"))
            #expect(await sender.send(Self.push("revoked")) == .delivered, "sent again with a new access token")
            #expect(peer.received.filter { $0.token == "revoked" }.map(\.accessToken) == peer.accessTokens)
            #expect(peer.accessTokens.count == 2)
        }
        // An argument FCM refuses that is not the token: the push is dropped, the device stays.
        let payload =
            #"{"error":{"code":400,"status":"INVALID_ARGUMENT","message":"Invalid value at 'message.data'","details":[{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"message.data[0].value"}]}]}}"#
        #expect(
            PushOutcome(fcmStatus: 400, body: Array(payload.utf8), retryAfter: nil)
                == .drop(reason: "INVALID_ARGUMENT"))
    }
}
