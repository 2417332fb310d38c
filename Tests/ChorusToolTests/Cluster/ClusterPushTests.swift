import ChorusFixtures
import ChorusPushPeers
import ChorusTestSupport
import Crypto
import Foundation
import Testing

@Suite("Cluster: pushes sent by one node")
struct ClusterPushTests {
    @Test(
        "one node holds the push lease and sends; SIGKILLed with pushes pending, another takes over within seconds and sends each, in order; one node sends at a time"
    )
    func failover() async throws {
        try await withTemporaryDirectory { root in
            let apnsPort = try LoopbackPort.free()
            let authority = try LocalCertificateAuthority()
            let key = P256.Signing.PrivateKey()
            try authority.caPEM.write(toFile: root + "/ca.pem", atomically: true, encoding: .utf8)
            try key.pemRepresentation.write(toFile: root + "/AuthKey.p8", atomically: true, encoding: .utf8)
            var environment = PushDeliveryTests.environment(root: root, apnsPort: apnsPort, fcmPort: 1)
            environment.removeValue(forKey: "CHORUS_FCM_SERVICE_ACCOUNT_FILE")
            environment.removeValue(forKey: "CHORUS_FCM_URL")
            try await ClusterFixture.run(nodes: 2, environment: environment, in: root) { cluster in
                func status(_ index: Int) async throws -> [String: Any] {
                    let node = cluster.node(index)
                    return try await node.call("GET", "/v1/admin/push", token: node.adminToken).json
                }
                var sender = -1
                try await eventually("one node sends") {
                    let sending = try await (0..<2).asyncFilter { try await status($0)["sending"] as? Bool == true }
                    sender = sending.first ?? -1
                    return sending.count == 1
                }
                let other = 1 - sender
                // Ana's phone; Bo's follow, like and message while APNs cannot be reached, written through the node
                // that does not send.
                let writer = cluster.node(other)
                let ana = try await writer.register("Ana")
                let bo = try await writer.register("Bo")
                #expect(
                    try await writer.call(
                        "POST", "/v1/me/devices", token: ana.token, json: ["platform": "apns", "token": "a1b2c3d4"]
                    ).status == 201)
                let post = try await writer.call("POST", "/v1/posts", token: ana.token, json: ["text": "Hello"])
                let postID = try #require(post.json["id"] as? String)
                #expect(try await writer.call("PUT", "/v1/users/\(ana.id)/follow", token: bo.token).status == 200)
                #expect(try await writer.call("PUT", "/v1/posts/\(postID)/like", token: bo.token).status == 200)
                #expect(
                    try await writer.call(
                        "POST", "/v1/messages", token: bo.token, json: ["to": ana.id, "text": "Hi"]
                    ).status == 201)
                var seen: [String: Any] = [:]
                try await eventually("the sender tried the three and failed: \(seen)") {
                    seen = try await status(sender)
                    return seen["pending"] as? Int == 3 && seen["failing"] as? Int ?? 0 >= 1
                }

                await cluster.kill(sender)
                try await LocalAPNs.run(authority, checkingWith: key.publicKey, port: apnsPort) { apns in
                    // A lease's term and a renewal: about 6 s on a quiet machine. Every suite running at once on two
                    // cores has stretched it past 20 s, so the wait leaves room for that, not for a lease never freed.
                    try await eventually(
                        "the other node took over and delivered the three: \(seen)", timeout: .seconds(60)
                    ) {
                        seen = try await status(other)
                        return seen["sending"] as? Bool == true && seen["delivered"] as? Int == 3
                            && seen["pending"] as? Int == 0
                    }
                    #expect(Self.firstArrivals(apns) == ["follow", "like", "message"], "each, in log order")

                    // The killed node comes back and joins the turn: one of the two sends, the other drops what
                    // was delivered.
                    try await cluster.start(sender)
                    #expect(
                        try await cluster.node(sender).call(
                            "POST", "/v1/messages", token: bo.token, json: ["to": ana.id, "text": "Again"]
                        ).status == 201)
                    var back: [String: Any] = [:]
                    try await eventually(
                        "the fourth delivered, neither node holding any: \(seen), \(back)", timeout: .seconds(120)
                    ) {
                        (seen, back) = (try await status(other), try await status(sender))
                        let senders = [seen, back].filter { $0["sending"] as? Bool == true }.count
                        return Self.firstArrivals(apns).count == 4 && senders == 1 && seen["pending"] as? Int == 0
                            && back["pending"] as? Int == 0
                    }
                    #expect(Self.firstArrivals(apns) == ["follow", "like", "message", "message"])
                }
            }
        }
    }
}

extension ClusterPushTests {
    /// The kinds of the pushes that arrived, in the order each first came: a push is sent at least once, and one sent
    /// again (by a sender that stalled past its lease, or was killed before it recorded the answer) has the same
    /// `apns-id`.
    static func firstArrivals(_ apns: LocalAPNs) -> [String?] {
        var seen = Set<String>()
        return apns.received.filter { seen.insert($0.headers["apns-id"] ?? "").inserted }.map {
            ($0.payload["chorus"] as? [String: Any])?["type"] as? String
        }
    }
}

extension Range where Bound == Int {
    /// The indices for which `isIncluded` holds, asked one after the other.
    fileprivate func asyncFilter(_ isIncluded: (Int) async throws -> Bool) async rethrows -> [Int] {
        var kept: [Int] = []
        for index in self where try await isIncluded(index) { kept.append(index) }
        return kept
    }
}
