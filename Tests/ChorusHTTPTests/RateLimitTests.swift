import ChorusBackend
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing

@testable import ChorusHTTP

@Suite("Rate limits: sign-ins, resets and writes")
struct RateLimitTests {
    /// A clock the test moves: the limits are proved without waiting for them.
    final class TestClock: Sendable {
        private let offset = Mutex<Duration>(.zero)
        private let start = ContinuousClock.now
        var now: ContinuousClock.Instant { start + offset.withLock { $0 } }
        func advance(_ duration: Duration) { offset.withLock { $0 += duration } }
    }

    static func limits(_ clock: TestClock) -> RateLimits {
        var limits = RateLimits()
        limits.loginFailuresPerAccount = .init(burst: 3, every: .seconds(30))
        limits.loginFailuresPerAccountAndAddress = .init(burst: 3, every: .seconds(30))
        limits.loginPerAddress = .init(burst: 5, every: .seconds(10))
        limits.registrationsPerAddress = .init(burst: 2, every: .seconds(60))
        limits.clock = { clock.now }
        return limits
    }

    /// Logs in from `address`, which the server takes from `X-Forwarded-For` (it trusts loopback as a proxy).
    static func logIn(_ api: APIFixture, _ email: String, _ password: String, from address: String) async throws
        -> APIFixture.Answer
    {
        try await api.call(
            .post, "/v1/auth/login", json: ["email": email, "password": password],
            headers: ["X-Forwarded-For": address])
    }

    @Test(
        "wrong passwords lock the guessing address out, never the owner's, however the e-mail is spelt (checked to fail with the limiter keyed on the e-mail as typed)"
    )
    func lockOutSparesTheOwner() async throws {
        let clock = TestClock()
        var limits = Self.limits(clock)
        limits.loginPerAddress = nil
        var options = APIFixture.options
        options.server.rateLimits = limits
        options.server.trustedProxies = [IPAddressRange("127.0.0.1")!]
        try await withAPI(.live, options: options) { api in
            let ana = try await api.register("Ana", email: "ana@example.com")
            let attacker = "203.0.113.7"
            for guess in ["wrong-1", "wrong-2", "wrong-3"] {
                #expect(try await Self.logIn(api, ana.email, guess, from: attacker).status == .unauthorized)
            }
            // The account has had its failures; from the guessing address nothing more is checked, whatever the
            // spelling of the e-mail: white space and case name the same account.
            for spelling in [
                "ana@example.com", " ana@example.com", "ana@example.com ", "\tANA@Example.com", "\nana@example.com",
            ] {
                let limited = try await Self.logIn(api, spelling, "secret-password", from: attacker)
                #expect(limited.status == .tooManyRequests, "\(spelling.debugDescription)")
                #expect(limited.errorCode == "rate_limited")
                #expect(limited.headers[.retryAfter] == "30")
            }
            // The owner, from an address that has not failed, signs in.
            let owner = "198.51.100.9"
            #expect(try await Self.logIn(api, ana.email, "secret-password", from: owner).status == .ok)
            #expect(try await Self.logIn(api, ana.email, "secret-password", from: owner).status == .ok)
            // Another address may try once while the account is locked; having failed, it waits too.
            let second = "203.0.113.8"
            #expect(try await Self.logIn(api, ana.email, "wrong-4", from: second).status == .unauthorized)
            #expect(try await Self.logIn(api, ana.email, "secret-password", from: second).status == .tooManyRequests)
            // Another account is not held back by Ana's.
            let bo = try await api.register("Bo")
            #expect(try await Self.logIn(api, bo.email, "secret-password", from: attacker).status == .ok)

            clock.advance(.seconds(31))
            #expect(try await Self.logIn(api, ana.email, "secret-password", from: attacker).status == .ok)
        }
    }

    @Test("X-Forwarded-For is believed only from trusted proxies: a client that sends it cannot pick its address")
    func forwardedForFromUntrustedPeers() async throws {
        let clock = TestClock()
        var options = APIFixture.options
        options.server.rateLimits = Self.limits(clock)
        try await withAPI(.live, options: options) { api in
            let ana = try await api.register("Ana")
            for index in 0..<5 {
                let answer = try await Self.logIn(
                    api, "nobody\(index)@example.com", "secret-password", from: "192.0.2.\(index)")
                #expect(answer.status != .tooManyRequests, "login \(index)")
            }
            // Each request named another address; all five came from loopback, which holds five logins.
            let sixth = try await Self.logIn(api, ana.email, "secret-password", from: "192.0.2.99")
            #expect(sixth.status == .tooManyRequests && sixth.headers[.retryAfter] == "10")
        }
    }

    @Test("the client address: the rightmost hop that is not a trusted proxy, never one a client chose")
    func clientAddress() {
        let proxies = [IPAddressRange("10.0.0.0/8")!, IPAddressRange("fd00::/8")!]
        func client(_ peer: String?, _ fields: [String]) -> String? {
            ClientAddressMiddleware.client(peer: peer, forwardedFor: fields, trusting: proxies)
        }
        #expect(client("192.0.2.1", ["198.51.100.1"]) == "192.0.2.1", "an untrusted peer is the client")
        #expect(client("10.0.0.2", ["198.51.100.1"]) == "198.51.100.1")
        #expect(client("10.0.0.2", ["6.6.6.6, 198.51.100.1"]) == "198.51.100.1", "what the client sent is on the left")
        #expect(client("10.0.0.2", ["6.6.6.6", "198.51.100.1, 10.1.2.3"]) == "198.51.100.1", "fields in order")
        #expect(client("10.0.0.2", ["198.51.100.1:4711"]) == "198.51.100.1")
        #expect(client("fd00::1", ["[2001:db8::7]:4711"]) == "2001:db8::7")
        #expect(client("10.0.0.2", ["10.9.9.9"]) == "10.9.9.9", "all trusted: the leftmost")
        #expect(client("10.0.0.2", ["6.6.6.6, not-an-address"]) == "10.0.0.2", "garbage: the trusted hop")
        #expect(client("10.0.0.2", []) == "10.0.0.2")
        #expect(client(nil, ["198.51.100.1"]) == nil)
        #expect(IPAddressRange("10.0.0.0/33") == nil && IPAddressRange("10.0.0") == nil)
        #expect(IPAddressRange("192.168.1.0/24")!.contains("192.168.1.200"))
        #expect(!IPAddressRange("192.168.1.0/24")!.contains("192.168.2.1"))
        #expect(IPAddressRange("::/0")!.contains("192.168.2.1"), "IPv4 is mapped into IPv6")
    }

    @Test("sign-ups and logins from one address are limited over a real socket")
    func perAddress() async throws {
        let clock = TestClock()
        var options = APIFixture.options
        options.server.rateLimits = Self.limits(clock)
        try await withAPI(.live, options: options) { api in
            let first = try await api.register("Cy")
            _ = try await api.register("Di")
            let head = api.head
            let third = try await api.call(
                .post, "/v1/auth/register",
                json: ["email": "eve@example.com", "password": "secret-password", "name": "Eve"])
            #expect(third.status == .tooManyRequests)
            #expect(third.errorCode == "rate_limited")
            #expect(third.headers[.retryAfter] == "60")
            #expect(api.head == head, "nothing appended")

            // Five logins from this address, to two accounts, then no more.
            for index in 0..<5 {
                let email = index % 2 == 0 ? first.email : "nobody@example.com"
                let answer = try await api.call(
                    .post, "/v1/auth/login", json: ["email": email, "password": "secret-password"])
                #expect(answer.status != .tooManyRequests, "login \(index)")
            }
            let sixth = try await api.call(
                .post, "/v1/auth/login", json: ["email": first.email, "password": "secret-password"])
            #expect(sixth.status == .tooManyRequests)
            #expect(sixth.headers[.retryAfter] == "10")

            clock.advance(.seconds(60))
            #expect(
                try await api.call(
                    .post, "/v1/auth/register",
                    json: ["email": "eve@example.com", "password": "secret-password", "name": "Eve"]
                ).status == .created)
            // Reads are never limited.
            #expect(try await api.call(.get, "/v1/me", token: first.token).status == .ok)
        }
    }

    @Test("writes per user: past the burst 429 with Retry-After and nothing appended; reads and other users go on")
    func writesPerUser() async throws {
        let clock = TestClock()
        var limits = RateLimits()
        limits.writesPerUser = .init(burst: 4, every: .seconds(2))
        limits.clock = { clock.now }
        var options = APIFixture.options
        options.server.rateLimits = limits
        try await withAPI(options: options) { api in
            let ana = try await api.register("Ana")
            let bo = try await api.register("Bo")
            for index in 0..<4 { _ = try await api.post(ana, "post \(index)") }
            let head = api.head
            let limited = try await api.call(.post, "/v1/posts", token: ana.token, json: ["text": "one too many"])
            #expect(limited.status == .tooManyRequests && limited.errorCode == "rate_limited")
            #expect(limited.headers[.retryAfter] == "2")
            let follow = try await api.call(.put, "/v1/users/\(bo.id)/follow", token: ana.token)
            #expect(follow.status == .tooManyRequests, "every kind of write counts")
            #expect(api.head == head, "nothing appended")
            #expect(try await api.call(.get, "/v1/feed/home", token: ana.token).status == .ok)
            #expect(try await api.call(.post, "/v1/posts", token: bo.token, json: ["text": "hi"]).status == .created)
            clock.advance(.seconds(2))
            #expect(
                try await api.call(.post, "/v1/posts", token: ana.token, json: ["text": "again"]).status == .created)
        }
    }

    @Test(
        "messages to strangers, rooms and reports have tighter limits; a second report of the same thing is the first"
    )
    func tighterLimits() async throws {
        let clock = TestClock()
        var limits = RateLimits()
        limits.messagesToStrangers = .init(burst: 2, every: .seconds(60))
        limits.messagesPerUser = .init(burst: 6, every: .seconds(1))
        limits.roomsPerUser = .init(burst: 2, every: .seconds(300))
        limits.reportsPerUser = .init(burst: 3, every: .seconds(60))
        limits.clock = { clock.now }
        var options = APIFixture.options
        options.server.rateLimits = limits
        try await withAPI(options: options) { api in
            let (spammer, stranger, friend) = (
                try await api.register("Spam"), try await api.register("Cy"), try await api.register("Di")
            )
            func message(_ to: APIFixture.User) async throws -> HTTPResponse.Status {
                try await api.call(.post, "/v1/messages", token: spammer.token, json: ["to": to.id, "text": "hi"])
                    .status
            }
            #expect(try await message(stranger) == .created)
            #expect(try await message(stranger) == .created)
            #expect(try await message(stranger) == .tooManyRequests, "a stranger: two, then one a minute")
            #expect(try await message(stranger) == .tooManyRequests, "refused as a stranger's, it spends no other")
            // Someone who follows the sender is no stranger; nor is one who wrote to them.
            _ = try await api.call(.put, "/v1/users/\(spammer.id)/follow", token: friend.token)
            #expect(try await message(friend) == .created)
            _ = try await api.call(
                .post, "/v1/messages", token: stranger.token, json: ["to": spammer.id, "text": "yo"])
            #expect(try await message(stranger) == .created, "a reply is not a stranger's message")
            #expect(try await message(friend) == .created)
            #expect(try await message(friend) == .created)
            #expect(try await message(friend) == .tooManyRequests, "six messages sent, then one a second")

            func room(_ name: String) async throws -> HTTPResponse.Status {
                try await api.call(.post, "/v1/rooms", token: spammer.token, json: ["name": name]).status
            }
            #expect(try await room("one") == .created)
            #expect(try await room("two") == .created)
            #expect(try await room("three") == .tooManyRequests)

            func report(_ reason: String) async throws -> APIFixture.Answer {
                try await api.call(
                    .post, "/v1/reports", token: spammer.token, json: ["userId": stranger.id, "reason": reason])
            }
            let first = try await report("spam")
            #expect(first.status == .created)
            let head = api.head
            let again = try await report("abuse")
            #expect(again.status == .created && again.object["id"] as? String == first.object["id"] as? String)
            #expect(api.head == head, "the same report: nothing filed")
            _ = try await report("spam")
            #expect(try await report("spam").status == .tooManyRequests, "even repeats count")
        }
    }

    @Test("a limiter forgets refilled keys past its bound, refuses new keys while none has refilled, and gives back")
    func limiter() {
        let clock = TestClock()
        let limiter = RateLimiter(.init(burst: 1, every: .seconds(10)), maximumKeys: 2, now: { clock.now })
        #expect(limiter.isUntouched("a"))
        #expect(limiter.attempt("a") == nil)
        #expect(!limiter.isUntouched("a"))
        #expect(limiter.attempt("b") == nil)
        #expect(limiter.attempt("c") != nil, "two keys are spent; a third waits")
        limiter.refund("b")
        #expect(limiter.isUntouched("b") && limiter.attempt("b") == nil, "given back")
        clock.advance(.seconds(10))
        #expect(limiter.attempt("c") == nil, "a and b refilled and were forgotten")
        #expect(limiter.attempt("c") != nil)
    }
}
