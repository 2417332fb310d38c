import ChorusProcesses
import ChorusTestSupport
import Foundation
import Testing

/// Findings 2, 3 and 10: the limit on wrong passwords bypassed by white space, password resets telling who has an
/// account, an owner kept locked out by whoever guesses, and the limits per address behind a reverse proxy.
@Suite("Abuse: signing in and resetting passwords")
struct SignInAttackTests {
    /// Logs in from `address`, which the server believes from loopback when it trusts loopback as a proxy.
    static func logIn(_ server: ServerProcess, _ email: String, _ password: String, from address: String) async throws
        -> ServerProcess.Answer
    {
        try await server.call(
            "POST", "/v1/auth/login", json: ["email": email, "password": password],
            headers: ["X-Forwarded-For": address])
    }

    @Test(
        "ten wrong passwords lock the guessing address out however the e-mail is spelt, and never the owner, who signs in from elsewhere (checked to fail with the limiter keyed on the e-mail as typed)"
    )
    func guessingAPassword() async throws {
        // Ten failures, as by default, earned back one in ten minutes rather than thirty seconds: on a loaded machine
        // the guesses (bcrypt each) can take longer than that.
        let limits = [
            "--rate-limit", "login-failures-per-account=10,10m", "--rate-limit",
            "login-failures-per-account-and-address=10,10m",
        ]
        try await withServerUnderAttack(limits + ["--trusted-proxies", "127.0.0.1"]) { server in
            let victim = try await server.user("Vi")
            let attacker = "203.0.113.7"
            for guess in 0..<10 {
                #expect(try await Self.logIn(server, victim.email, "guess \(guess)", from: attacker).status == 401)
            }
            let spellings = [
                victim.email, " \(victim.email)", "\(victim.email) ", "\t\(victim.email)", "\(victim.email)\n",
                victim.email.uppercased(), "\u{A0}\(victim.email)", "\u{2003}\(victim.email)\u{3000}",
            ]
            for spelling in spellings {
                let answer = try await Self.logIn(server, spelling, "secret-password", from: attacker)
                #expect(answer.status == 429, "\(spelling.debugDescription) answered \(answer.status)")
                #expect(answer.headers["retry-after"].flatMap(Int.init) ?? 0 >= 1)
            }
            // Look-alikes are other e-mails, which no account has: they sign no one in.
            let lookalikes = [
                victim.email.replacingOccurrences(of: "@", with: "\u{200B}@"),
                victim.email.replacingOccurrences(of: "e", with: "е"),
                victim.email.replacingOccurrences(of: "@", with: "＠"),
            ]
            for lookalike in lookalikes {
                let answer = try await Self.logIn(server, lookalike, "secret-password", from: "203.0.113.9")
                #expect(answer.status == 401, "\(lookalike.debugDescription)")
            }
            // The owner knows the password, and has not failed from where they are.
            #expect(try await Self.logIn(server, victim.email, "secret-password", from: "198.51.100.20").status == 200)
            #expect(try await Self.logIn(server, victim.email, "secret-password", from: "198.51.100.20").status == 200)
            // A new address may guess once while the account is locked, then waits as well.
            #expect(try await Self.logIn(server, victim.email, "guess", from: "203.0.113.8").status == 401)
            #expect(try await Self.logIn(server, victim.email, "secret-password", from: "203.0.113.8").status == 429)
        }
    }

    @Test(
        "behind a proxy each client has its own limits with --trusted-proxies, and without it X-Forwarded-For buys no fresh ones"
    )
    func limitsBehindAProxy() async throws {
        let limit = ["--rate-limit", "registrations-per-address=3,10m"]
        func signUp(_ server: ServerProcess, from address: String) async throws -> Int {
            let email = "p-\(UUID().uuidString.prefix(8).lowercased())@example.com"
            return try await server.call(
                "POST", "/v1/auth/register", json: ["email": email, "password": "secret-password", "name": "P"],
                headers: ["X-Forwarded-For": address]
            ).status
        }
        try await withServerUnderAttack(limit) { server in
            // Each claims another address; all come from loopback, which has three.
            let statuses = try await (0..<4).asyncMap { try await signUp(server, from: "192.0.2.\($0)") }
            #expect(statuses == [201, 201, 201, 429])
        }
        try await withServerUnderAttack(limit + ["--trusted-proxies", "127.0.0.0/8,::1"]) { server in
            for address in ["192.0.2.1", "192.0.2.2"] {
                let statuses = try await (0..<4).asyncMap { _ in try await signUp(server, from: address) }
                #expect(statuses == [201, 201, 201, 429], "\(address)")
            }
            // What a client writes on the left of the proxy's own hop changes nothing.
            #expect(try await signUp(server, from: "6.6.6.6, 192.0.2.1") == 429)
        }
        try await withTemporaryDirectory { root in
            let malformed = try await runChorus(["serve", "--data", root, "--trusted-proxies", "10.0.0.0/33"])
            #expect(malformed.status != 0 && malformed.standardError.contains("10.0.0.0/33 is neither"))
        }
    }

    @Test(
        "a password reset tells no one who has an account: the same answer, one event either way, and neither /health nor /metrics says more to anyone but the admin"
    )
    func resetTellsNothing() async throws {
        try await withServerUnderAttack { server in
            let victim = try await server.user("Vi")
            let user = try await server.user("Eve")
            let health = try await server.call("GET", "/health")
            #expect(health.status == 200 && health.json.keys.sorted() == ["status"])
            #expect(health.headers["chorus-position"] == nil)
            #expect(try await server.call("GET", "/health", token: user.token).json.keys.sorted() == ["status"])
            #expect(try await server.call("GET", "/metrics").status == 401)
            #expect(try await server.call("GET", "/metrics", token: user.token).status == 403)
            #expect(try await server.call("GET", "/metrics", token: server.adminToken).status == 200)

            var answers: [String: ServerProcess.Answer] = [:]
            for email in [victim.email, "nobody-\(UUID().uuidString.prefix(6))@example.com", "not an e-mail at all"] {
                let before = try await server.head()
                let answer = try await server.call("POST", "/v1/auth/password-reset", json: ["email": email])
                #expect(try await server.head() == before + 1, "\(email): one event")
                answers[email] = answer
            }
            let seen = Set(
                answers.values.map { answer in
                    let headers = answer.headers.filter { $0.key != "date" }.sorted { $0.key < $1.key }
                    return "\(answer.status) \(headers) \(answer.text)"
                })
            #expect(seen.count == 1, "\(seen)")
            #expect(answers[victim.email]?.status == 202 && answers[victim.email]?.headers["chorus-position"] == nil)
        }
    }
}

extension Sequence {
    /// `transform` of each element, in order, one after the other.
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var mapped: [T] = []
        for element in self { mapped.append(try await transform(element)) }
        return mapped
    }
}
