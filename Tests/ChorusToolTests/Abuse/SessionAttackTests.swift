import ChorusFixtures
import ChorusProcesses
import ChorusTestSupport
import Foundation
import Testing

/// Findings 1 and 6 (a revoked session kept reading direct messages over its live stream; a stream resumed past the
/// log's head stayed silent for good), and the cap on streams per user of finding 9.
@Suite("Abuse: live streams and sessions")
struct SessionAttackTests {
    /// Every way a session ends.
    enum Ending: String, CaseIterable, Sendable {
        case logout, endedFromAnotherSession, passwordChange, passwordReset, suspension, accountDeletion
    }

    @Test(
        "a stolen token's stream of direct messages closes as its session ends, every way a session ends, and the token is refused after (checked to fail, the stream delivering on, with the session-end check taken out)",
        arguments: Ending.allCases)
    func revokedSessionStopsReading(_ ending: Ending) async throws {
        let receiver = WebhookReceiver(port: try LoopbackPort.free(), mode: .status(200))
        try await receiver.start()
        defer { Task { await receiver.stop() } }
        let webhooks = [
            "CHORUS_WEBHOOK_URL": "http://127.0.0.1:\(receiver.port)/hook",
            "CHORUS_WEBHOOK_SECRET": "whsec_" + Data(repeating: 7, count: 24).base64EncodedString(),
        ]
        try await withServerUnderAttack(environment: webhooks) { server in
            let victim = try await server.user("Vi")
            let bo = try await server.user("Bo")
            // The attacker holds the victim's token; the victim signs in elsewhere too.
            let otherSession =
                try await server.call(
                    "POST", "/v1/auth/login", json: ["email": victim.email, "password": "secret-password"]
                ).json["token"] as? String ?? ""
            let stolen = try await server.openStream("conversations,conversation:\(bo.id)", token: victim.token)
            _ = try await server.call(
                "POST", "/v1/messages", token: bo.token, json: ["to": victim.id, "text": "before"])
            #expect(try await stolen.next().contains("event: message"))

            try await end(ending, of: victim, otherSession: otherSession, admin: bo, server: server, receiver: receiver)
            let ended = ContinuousClock.now
            var next = try await stolen.next()
            // The message before the end has a second event (the conversation's row), which may still be unread.
            while next.hasPrefix("id:") && next.contains("before") { next = try await stolen.next() }
            let waited = ContinuousClock.now - ended
            #expect(next == ": session ended", "\(ending): \(next)")
            // A few milliseconds on a quiet machine (docs/SECURITY.md); bounded below the heartbeat (15 s), loosely
            // enough for a machine the whole suite loads (fresh clones' runs once took just over 5 s, once 13.3 s).
            #expect(waited < .seconds(14), "\(ending): closed \(waited) after the session ended")
            // What comes after the end never reaches the stream: it is closed.
            _ = try await server.call(
                "POST", "/v1/messages", token: bo.token, json: ["to": victim.id, "text": "after"])
            await #expect(throws: StreamError.self, "\(ending): the stream is closed") { try await stolen.next() }
            #expect(try await server.liveStatus("topics=conversations", token: victim.token) == 401, "\(ending)")
        }
    }

    /// Ends the session of `user.token` as `ending` says: by the user, another of their sessions, a reset whose token
    /// the webhook delivers, or an admin (`admin` reports the user; the admin token suspends them).
    private func end(
        _ ending: Ending, of user: (id: String, token: String, email: String), otherSession: String,
        admin reporter: (id: String, token: String, email: String), server: ServerProcess, receiver: WebhookReceiver
    ) async throws {
        let session = String(user.token.prefix { $0 != "." })
        let answer: ServerProcess.Answer
        switch ending {
        case .logout:
            answer = try await server.call("POST", "/v1/auth/logout", token: user.token)
        case .endedFromAnotherSession:
            answer = try await server.call("DELETE", "/v1/me/sessions/\(session)", token: otherSession)
        case .passwordChange:
            answer = try await server.call(
                "POST", "/v1/me/password", token: otherSession,
                json: ["currentPassword": "secret-password", "newPassword": "another password"])
        case .passwordReset:
            _ = try await server.call("POST", "/v1/auth/password-reset", json: ["email": user.email])
            // The token goes out through the password_reset.requested webhook, after the webhooks before it.
            var token: String?
            for _ in 0..<300 where token == nil {
                token =
                    receiver.received.compactMap { received -> String? in
                        let object = try? JSONSerialization.jsonObject(with: Data(received.body)) as? [String: Any]
                        return (object?["data"] as? [String: Any])?["token"] as? String
                    }.last
                if token == nil { try await Task.sleep(for: .milliseconds(100)) }
            }
            answer = try await server.call(
                "POST", "/v1/auth/password-reset/confirm",
                json: ["token": token ?? "", "newPassword": "another password"])
        case .suspension:
            let report = try await server.call(
                "POST", "/v1/reports", token: reporter.token, json: ["userId": user.id, "reason": "abuse"])
            let id = try #require(report.json["id"] as? String)
            answer = try await server.call(
                "POST", "/v1/admin/reports/\(id)/resolve", token: server.adminToken, json: ["action": "suspend_user"])
        case .accountDeletion:
            answer = try await server.call(
                "DELETE", "/v1/me", token: otherSession, json: ["password": "secret-password"])
        }
        #expect((200..<300).contains(answer.status), "\(ending) answered \(answer.status): \(answer.text)")
    }

    @Test("a stream asked to resume past the log's head is refused with 400; positions it was handed resume")
    func resumePastTheHead() async throws {
        try await withServerUnderAttack { server in
            let ana = try await server.user("Ana")
            let head = try await server.head()
            for value in ["\(head + 1)", "18446744073709551615"] {
                let status = try await server.liveStatus(
                    "topics=feed", token: ana.token, headers: ["Last-Event-ID": value])
                #expect(status == 400, "Last-Event-ID \(value)")
            }
            for query in ["after=\(head + 1)", "after=-1", "after=1e3"] {
                #expect(try await server.liveStatus("topics=feed&\(query)", token: ana.token) == 400, "\(query)")
            }
            _ = try await server.openStream("feed", token: ana.token, headers: ["Last-Event-ID": "\(head)"])
        }
    }

    @Test(
        "one token opening 1,000 streams holds 20 at most: the oldest close, the newest deliver, others are untouched")
    func streamsPerUser() async throws {
        try await withServerUnderAttack { server in
            let attacker = try await server.user("Mallory")
            let bystander = try await server.user("Bo")
            let bystanders = try await server.openStream("conversations", token: bystander.token)
            var streams: [RawHTTPStream] = []
            for _ in 0..<1_000 { streams.append(try await server.openStream("conversations", token: attacker.token)) }
            // All but the newest 20 were closed, each saying why.
            for stream in streams.prefix(980) {
                #expect(try await stream.next() == ": closed: this account opened more live streams than it may")
                await #expect(throws: StreamError.self) { try await stream.next() }
            }
            _ = try await server.call(
                "POST", "/v1/messages", token: bystander.token, json: ["to": attacker.id, "text": "hi"])
            for stream in streams.suffix(20) { #expect(try await stream.next().contains("event: conversation")) }
            #expect(try await bystanders.next().contains("event: conversation"))
        }
    }
}
