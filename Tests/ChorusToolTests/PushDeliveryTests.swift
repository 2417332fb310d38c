import ChorusFixtures
import ChorusPushPeers
import ChorusTestSupport
import Crypto
import CryptoExtras
import Foundation
import Testing

/// `chorus serve` sending pushes to local APNs and FCM peers, as an operator configures it: the `.p8` key, the service
/// account file and the test CA in files, named by the variables.
@Suite("Push delivery")
struct PushDeliveryTests {
    /// The local peers, and the environment that points a server at them.
    struct Peers {
        let apns: LocalAPNs
        let fcm: LocalFCM
        let environment: [String: String]
    }

    /// Runs `body` with an APNs peer (on `apnsPort`, or one the system picks) and an FCM peer, their CA and keys in
    /// files under `root`.
    static func withPeers(root: String, apnsPort: Int = 0, _ body: (Peers) async throws -> Void) async throws {
        let authority = try LocalCertificateAuthority()
        let apnsKey = P256.Signing.PrivateKey()
        let fcmKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        try authority.caPEM.write(toFile: root + "/ca.pem", atomically: true, encoding: .utf8)
        try apnsKey.pemRepresentation.write(toFile: root + "/AuthKey.p8", atomically: true, encoding: .utf8)
        try await LocalAPNs.run(authority, checkingWith: apnsKey.publicKey, port: apnsPort) { apns in
            try await LocalFCM.run(authority, checkingWith: fcmKey.publicKey) { fcm in
                try Data(fcm.serviceAccount(project: "chorus-test", privateKeyPEM: fcmKey.pemRepresentation))
                    .write(to: URL(fileURLWithPath: root + "/service-account.json"))
                try await body(
                    Peers(
                        apns: apns, fcm: fcm,
                        environment: Self.environment(root: root, apnsPort: apns.port, fcmPort: fcm.port)))
            }
        }
    }

    static func environment(root: String, apnsPort: Int, fcmPort: Int) -> [String: String] {
        [
            "CHORUS_APNS_KEY_FILE": root + "/AuthKey.p8", "CHORUS_APNS_KEY_ID": "KEY1234567",
            "CHORUS_APNS_TEAM_ID": "TEAM123456", "CHORUS_APNS_TOPIC": "com.example.chorus",
            "CHORUS_APNS_URL": "https://localhost:\(apnsPort)",
            "CHORUS_APNS_SANDBOX_URL": "https://localhost:\(apnsPort)/sandbox",
            "CHORUS_FCM_SERVICE_ACCOUNT_FILE": root + "/service-account.json",
            "CHORUS_FCM_URL": "https://localhost:\(fcmPort)",
            "CHORUS_PUSH_CA_FILE": root + "/ca.pem",
            "CHORUS_PUSH_RETRY_DELAY_MS": "100", "CHORUS_PUSH_MAX_RETRY_DELAY_MS": "400",
            // Long enough for any answer of a peer on a loaded machine: a push timed out after the peer took it is
            // sent again (at least once), which the tests' counts would see.
            "CHORUS_PUSH_TIMEOUT_MS": "120000",
        ]
    }

    @Test(
        "a like and a message reach the recipient's iPhone and Android phone in order, signed; a dead token forgets its device; the admin route and /metrics count it all"
    )
    func likesAndMessages() async throws {
        try await withTemporaryDirectory { root in
            try await Self.withPeers(root: root) { peers in
                let server = try await ServerProcess(data: root + "/data", environment: peers.environment)
                let ana = try await server.register(email: "ana@example.com", name: "Ana")
                let bo = try await server.register(email: "bo@example.com", name: "Bo")
                for (platform, token, environment) in [
                    ("apns", "a1b2c3d4", "sandbox"), ("fcm", "ana-pixel:APA91b", "production"),
                    ("apns", "gone", "production"),
                ] {
                    let device = try await server.call(
                        "POST", "/v1/me/devices", token: ana.token,
                        json: ["platform": platform, "token": token, "environment": environment])
                    #expect(device.status == 201, "\(device.json)")
                }
                let post = try await server.call("POST", "/v1/posts", token: ana.token, json: ["text": "Hello"])
                let postID = try #require(post.json["id"] as? String)
                #expect(try await server.call("PUT", "/v1/posts/\(postID)/like", token: bo.token).status == 200)
                let message = try await server.call(
                    "POST", "/v1/messages", token: bo.token, json: ["to": ana.id, "text": "Lunch at noon?"])
                #expect(message.status == 201)

                try await eventually("the like and the message at both phones, the dead token tried") {
                    peers.apns.received.filter { $0.token == "a1b2c3d4" }.count == 2
                        && peers.fcm.received.count == 2 && peers.apns.received.contains { $0.token == "gone" }
                }
                let iPhone = peers.apns.received.filter { $0.token == "a1b2c3d4" }
                #expect(iPhone.allSatisfy { $0.sandbox && $0.headers["apns-topic"] == "com.example.chorus" })
                #expect(iPhone.allSatisfy { $0.keyID == "KEY1234567" && $0.claims["iss"] == "TEAM123456" })
                let alerts = iPhone.map { ($0.payload["aps"] as? [String: Any])?["alert"] as? [String: Any] }
                #expect(alerts.map { $0?["body"] as? String } == ["Bo liked your post", "Bo: Lunch at noon?"])
                #expect(iPhone.map { ($0.payload["aps"] as? [String: Any])?["badge"] as? Int } == [1, 2])
                #expect(iPhone[0].headers["apns-collapse-id"] == "likes:\(postID)")
                let android = peers.fcm.received.map(\.message)
                #expect(
                    android.map { ($0["notification"] as? [String: Any])?["body"] as? String } == [
                        "Bo liked your post", "Bo: Lunch at noon?",
                    ])
                #expect(android.map { ($0["data"] as? [String: String])?["type"] } == ["like", "message"])

                // The dead token: its device is forgotten, its later pushes never made.
                var status: [String: Any] = [:]
                try await eventually("the dead token removed: \(status)") {
                    status = try await server.call("GET", "/v1/admin/push", token: server.adminToken).json
                    return status["removedTokens"] as? Int == 1 && status["pending"] as? Int == 0
                }
                #expect(status["apns"] as? Bool == true && status["fcm"] as? Bool == true)
                #expect(status["devices"] as? Int == 2 && status["delivered"] as? Int == 4)
                #expect(!(status["lastError"] as? String ?? "").isEmpty)
                let devices = try await server.allItems("/v1/me/devices", token: ana.token)
                #expect(devices.compactMap { $0["platform"] as? String }.sorted() == ["apns", "fcm"])
                #expect(peers.apns.received.filter { $0.token == "gone" }.count == 1, "one push, then forgotten")

                let metrics = try await server.call("GET", "/metrics", token: server.adminToken).text
                #expect(
                    metrics.contains(#"chorus_push_sent_total{provider="apns",result="delivered"} 2"#), "\(metrics)")
                #expect(metrics.contains(#"chorus_push_sent_total{provider="fcm",result="delivered"} 2"#))
                #expect(metrics.contains(#"chorus_push_sent_total{provider="apns",result="token_removed"} 1"#))
                #expect(await server.stop() == 0)
            }
        }
    }

    @Test(
        "with APNs unreachable and the server SIGKILLed, no push is lost: each arrives once, in log order, after the restart; none delivered is sent again after another SIGKILL"
    )
    func nothingLostAcrossSIGKILL() async throws {
        try await withTemporaryDirectory { root in
            let apnsPort = try LoopbackPort.free()
            // Nothing listens at APNs' address yet.
            var environment = Self.environment(root: root, apnsPort: apnsPort, fcmPort: 1)
            environment.removeValue(forKey: "CHORUS_FCM_SERVICE_ACCOUNT_FILE")
            environment.removeValue(forKey: "CHORUS_FCM_URL")
            try LocalCertificateAuthority().caPEM.write(toFile: root + "/ca.pem", atomically: true, encoding: .utf8)
            try P256.Signing.PrivateKey().pemRepresentation.write(
                toFile: root + "/AuthKey.p8", atomically: true, encoding: .utf8)
            var server = try await ServerProcess(data: root + "/data", environment: environment)
            let ana = try await server.register(email: "ana@example.com", name: "Ana")
            let bo = try await server.register(email: "bo@example.com", name: "Bo")
            let device = try await server.call(
                "POST", "/v1/me/devices", token: ana.token, json: ["platform": "apns", "token": "a1b2c3d4"])
            #expect(device.status == 201)
            let post = try await server.call("POST", "/v1/posts", token: ana.token, json: ["text": "Hello"])
            let postID = try #require(post.json["id"] as? String)
            #expect(try await server.call("PUT", "/v1/users/\(ana.id)/follow", token: bo.token).status == 200)
            #expect(try await server.call("PUT", "/v1/posts/\(postID)/like", token: bo.token).status == 200)
            #expect(
                try await server.call("POST", "/v1/messages", token: bo.token, json: ["to": ana.id, "text": "Hi"])
                    .status
                    == 201)
            var status: [String: Any] = [:]
            try await eventually("three pushes failing: \(status)") {
                status = try await server.call("GET", "/v1/admin/push", token: server.adminToken).json
                return status["pending"] as? Int == 3 && status["failing"] as? Int ?? 0 >= 1
            }
            server.kill()
            _ = await server.exited()

            // The peer starts, with a key the server's file now holds, and the server with it.
            let authority = try LocalCertificateAuthority()
            try authority.caPEM.write(toFile: root + "/ca.pem", atomically: true, encoding: .utf8)
            let key = P256.Signing.PrivateKey()
            try key.pemRepresentation.write(toFile: root + "/AuthKey.p8", atomically: true, encoding: .utf8)
            try await LocalAPNs.run(authority, checkingWith: key.publicKey, port: apnsPort) { apns in
                server = try await ServerProcess(data: root + "/data", port: server.port, environment: environment)
                try await eventually("the three pushes delivered: \(status)") {
                    status = try await server.call("GET", "/v1/admin/push", token: server.adminToken).json
                    return status["delivered"] as? Int == 3 && status["pending"] as? Int == 0
                }
                let types = apns.received.map { ($0.payload["chorus"] as? [String: Any])?["type"] as? String }
                #expect(types == ["follow", "like", "message"], "in log order, each once")
                #expect(Set(apns.received.compactMap { $0.headers["apns-id"] }).count == 3)

                // Killed with nothing pending: after the restart only the new message goes.
                server.kill()
                _ = await server.exited()
                server = try await ServerProcess(data: root + "/data", port: server.port, environment: environment)
                #expect(
                    try await server.call(
                        "POST", "/v1/messages", token: bo.token, json: ["to": ana.id, "text": "Again"]
                    ).status == 201)
                try await eventually("the fourth push delivered: \(status)") {
                    status = try await server.call("GET", "/v1/admin/push", token: server.adminToken).json
                    return status["delivered"] as? Int == 4 && status["pending"] as? Int == 0
                }
                #expect(apns.received.count == 4, "none delivered before was sent again")
                #expect(await server.stop() == 0)
            }
        }
    }
}
