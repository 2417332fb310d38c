import ChorusFixtures
import ChorusProcesses
import ChorusTestSupport
import Foundation
import Testing

@Suite("Webhooks")
struct WebhookDeliveryTests {
    static let secret = "whsec_" + Data((0..<32).map { UInt8($0 * 7 % 251) }).base64EncodedString()

    @Test(
        "a receiver down, then slow, then failing, then well, with SIGKILLs between: every webhook arrives, signed, in order per recipient, and none acknowledged is sent again"
    )
    func deliveryThroughFailures() async throws {
        try await withTemporaryDirectory { root in
            let data = root + "/data"
            let receiver = WebhookReceiver(port: try LoopbackPort.free(), mode: .status(200))
            var environment = [
                "CHORUS_WEBHOOK_URL": "http://127.0.0.1:\(receiver.port)/hook", "CHORUS_WEBHOOK_SECRET": Self.secret,
                "CHORUS_WEBHOOK_RETRY_DELAY_MS": "100", "CHORUS_WEBHOOK_MAX_RETRY_DELAY_MS": "800",
                "CHORUS_WEBHOOK_TIMEOUT_MS": "400",
                "CHORUS_ADMIN_TOKEN": "admin",
            ]
            var server = try await ServerProcess(data: data, environment: environment)
            func register(_ name: String) async throws -> (id: String, token: String, email: String) {
                let email = "\(name.lowercased())@example.com"
                let answer = try await server.call(
                    "POST", "/v1/auth/register", json: ["email": email, "password": "secret-password", "name": name])
                return (
                    try #require((answer.json["user"] as? [String: Any])?["id"] as? String),
                    try #require(answer.json["token"] as? String), email
                )
            }
            let ana = try await register("Ana")
            let bo = try await register("Bo")
            var expected: [String: Int] = [:]
            /// Writes that each make one webhook: a follow of Ana (a notification), a message to her, a reset, a report
            /// (of a post of Bo's: one more report of Bo himself, while Ana's first is open, would be that one).
            func writeRound(_ round: Int) async throws {
                let follow = try await server.call("PUT", "/v1/users/\(ana.id)/follow", token: bo.token)
                #expect(follow.status == 200)
                _ = try await server.call("DELETE", "/v1/users/\(ana.id)/follow", token: bo.token)
                let message = try await server.call(
                    "POST", "/v1/messages", token: bo.token, json: ["to": ana.id, "text": "round \(round)"])
                #expect(message.status == 201)
                let reset = try await server.call("POST", "/v1/auth/password-reset", json: ["email": bo.email])
                #expect(reset.status == 202)
                let post = try await server.call("POST", "/v1/posts", token: bo.token, json: ["text": "round \(round)"])
                let report = try await server.call(
                    "POST", "/v1/reports", token: ana.token,
                    json: ["postId": post.json["id"] as? String ?? "", "reason": "spam"])
                #expect(report.status == 201)
                expected["report.filed", default: 0] += 1
                expected["notification.created", default: 0] += 1
                expected["message.created", default: 0] += 1
                expected["password_reset.requested", default: 0] += 1
            }

            // Down: nothing listens; the sends fail and wait to be tried again.
            try await writeRound(0)
            try await Task.sleep(for: .milliseconds(600))
            let failing = try await server.call("GET", "/v1/admin/webhooks", token: "admin")
            #expect(failing.json["enabled"] as? Bool == true)
            #expect(failing.json["failing"] as? Int ?? 0 > 0, "\(failing.json)")
            #expect(failing.json["lastError"] is String)
            server.kill()
            _ = await server.exited()

            // Slow: the answers come after the sender gave up waiting.
            try await receiver.settle()
            receiver.set(.slow(.milliseconds(900)))
            try await receiver.start()
            server = try await ServerProcess(data: data, environment: environment)
            try await writeRound(1)
            try await receiver.waitForRequests(moreThan: 0)
            try await Task.sleep(for: .milliseconds(500))
            server.kill()
            _ = await server.exited()

            try await receiver.settle()
            // Failing: 500 each time. From here on the sender waits long enough for any answer, so that a 2xx the
            // receiver gives is one the sender sees (on a loaded machine 400 ms may not be).
            receiver.set(.status(500))
            environment["CHORUS_WEBHOOK_TIMEOUT_MS"] = "20000"
            server = try await ServerProcess(data: data, environment: environment)
            let slowRequests = receiver.received.count
            try await writeRound(2)
            try await receiver.waitForRequests(moreThan: slowRequests)
            server.kill()
            _ = await server.exited()

            // Well again: everything goes out.
            try await receiver.settle()
            receiver.set(.status(200))
            server = try await ServerProcess(data: data, environment: environment)
            try await writeRound(3)
            /// Waits until the outbox has nothing pending and has delivered every webhook written.
            func waitUntilDelivered() async throws {
                let total = expected.values.reduce(0, +)
                var status: [String: Any] = [:]
                try await eventually("all \(total) delivered, not \(status)", timeout: .seconds(60)) {
                    status = try await server.call("GET", "/v1/admin/webhooks", token: "admin").json
                    return status["pending"] as? Int == 0 && status["delivered"] as? Int == total
                }
            }
            try await waitUntilDelivered()
            // Killed once more with nothing pending, and started again: nothing is sent twice. One more round after
            // the restart makes a webhook for each recipient, and each recipient's go out in log order, so one sent
            // again would come before that round's.
            server.kill()
            _ = await server.exited()
            let before = receiver.received.count
            server = try await ServerProcess(data: data, environment: environment)
            try await writeRound(4)
            try await waitUntilDelivered()
            #expect(receiver.received.count == before + 4, "only the last round's after a restart")
            #expect(await server.stop() == 0)
            await receiver.stop()

            let received = receiver.received
            #expect(received.allSatisfy { WebhookReceiver.verifies($0, secret: Self.secret) }, "every signature")
            #expect(received.contains { !$0.acknowledged }, "some attempts failed and were tried again")
            // Every webhook was acknowledged once, and never sent again after that.
            var acknowledgedAt: [String: Int] = [:]
            for (index, request) in received.enumerated() {
                if let first = acknowledgedAt[request.id] {
                    Issue.record("\(request.id) was sent again (request \(index)) after its 2xx (request \(first))")
                }
                if request.acknowledged { acknowledgedAt[request.id] = index }
            }
            let types = Dictionary(
                grouping: Set(acknowledgedAt.keys).map { id in
                    String(id.split(separator: "_", maxSplits: 2).last ?? "")
                }, by: { $0 }
            ).mapValues(\.count)
            #expect(types == expected)
            // In log order per recipient: the ids carry their position.
            var recipients: [String: [UInt64]] = [:]
            for request in received where request.acknowledged {
                let object = try #require(try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any])
                let payload = try #require(object["data"] as? [String: Any])
                let recipient =
                    object["type"] as? String == "report.filed"
                    ? "moderation" : (payload["recipient"] ?? payload["userId"]) as? String ?? ""
                recipients[recipient, default: []].append(UInt64(request.id.split(separator: "_")[1]) ?? 0)
                #expect(object["type"] as? String != nil && object["timestamp"] is String)
            }
            for (recipient, positions) in recipients {
                #expect(positions == positions.sorted(), "in log order for \(recipient)")
            }
            #expect(Set(recipients.keys) == [ana.id, bo.id, "moderation"])
            // The reset webhook carries a token that sets a new password.
            let reset = try #require(
                received.first { $0.acknowledged && $0.id.hasSuffix("password_reset.requested") })
            let resetData = try #require(
                (try JSONSerialization.jsonObject(with: Data(reset.body)) as? [String: Any])?["data"] as? [String: Any])
            #expect(resetData["email"] as? String == bo.email && resetData["userId"] as? String == bo.id)
            server = try await ServerProcess(data: data)
            let confirm = try await server.call(
                "POST", "/v1/auth/password-reset/confirm",
                json: ["token": try #require(resetData["token"] as? String), "newPassword": "from the e-mail"])
            #expect(confirm.status == 204)
            #expect(await server.stop() == 0)
        }
    }

    @Test(
        "an account's deletion sends account.deleted once, naming the user's id alone, and drops the webhooks about the account that were still pending"
    )
    func accountDeleted() async throws {
        try await withTemporaryDirectory { root in
            let receiver = WebhookReceiver(port: try LoopbackPort.free(), mode: .status(500))
            try await receiver.start()
            let server = try await ServerProcess(
                data: root + "/data", extraArguments: ["--erasure-delay", "1s"],
                environment: [
                    "CHORUS_WEBHOOK_URL": "http://127.0.0.1:\(receiver.port)/hook",
                    "CHORUS_WEBHOOK_SECRET": Self.secret,
                    "CHORUS_WEBHOOK_RETRY_DELAY_MS": "200", "CHORUS_WEBHOOK_MAX_RETRY_DELAY_MS": "400",
                    "CHORUS_ADMIN_TOKEN": "admin",
                ])
            var users: [(id: String, token: String)] = []
            for name in ["Ana", "Bo"] {
                let answer = try await server.call(
                    "POST", "/v1/auth/register",
                    json: ["email": "\(name)@example.com", "password": "secret-password", "name": name])
                users.append(
                    (
                        try #require((answer.json["user"] as? [String: Any])?["id"] as? String),
                        try #require(answer.json["token"] as? String)
                    ))
            }
            let (ana, bo) = (users[0], users[1])
            // Two webhooks about Bo, refused while the receiver fails: a message of his to Ana, Ana's follow of him.
            let message = try await server.call(
                "POST", "/v1/messages", token: bo.token, json: ["to": ana.id, "text": "before I go"])
            #expect(message.status == 201)
            #expect(try await server.call("PUT", "/v1/users/\(bo.id)/follow", token: ana.token).status == 200)
            try await eventually("both refused") {
                let types = Set(receiver.received.map { String($0.id.split(separator: "_", maxSplits: 2).last ?? "") })
                return types == ["message.created", "notification.created"]
            }
            let deletion = try await server.call(
                "DELETE", "/v1/me", token: bo.token, json: ["password": "secret-password"])
            #expect(deletion.status == 202)
            try await AccountErasureTests.waitForErasure(of: bo.id, on: server)

            try await receiver.settle()
            receiver.set(.status(200))
            var status: [String: Any] = [:]
            try await eventually("the outbox emptied: \(status)", timeout: .seconds(60)) {
                status = try await server.call("GET", "/v1/admin/webhooks", token: "admin").json
                return status["pending"] as? Int == 0
            }
            // The two refused before the deletion were about Bo: taken out, never sent again.
            #expect(status["delivered"] as? Int == 1, "\(status)")
            // At least once: a retry of the same webhook (its answer lost under load) is the same webhook.
            let delivered = receiver.received.filter(\.acknowledged)
            #expect(Set(delivered.map(\.id)).count == 1, "\(delivered.map(\.id))")
            let webhook = try #require(delivered.first)
            #expect(WebhookReceiver.verifies(webhook, secret: Self.secret))
            let object = try #require(try JSONSerialization.jsonObject(with: Data(webhook.body)) as? [String: Any])
            #expect(object["type"] as? String == "account.deleted")
            #expect(object["timestamp"] is String)
            let payload = try #require(object["data"] as? [String: Any])
            #expect(payload.count == 1 && payload["userId"] as? String == bo.id, "\(payload)")
            #expect(await server.stop() == 0)
            await receiver.stop()
        }
    }
}
