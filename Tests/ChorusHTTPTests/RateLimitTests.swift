import ChorusBackend
import ChorusHTTP
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing

@Suite("Rate limits on sign-ups and logins")
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
        limits.loginPerAccount = .init(burst: 3, every: .seconds(30))
        limits.loginPerAddress = .init(burst: 5, every: .seconds(10))
        limits.registrationPerAddress = .init(burst: 2, every: .seconds(60))
        limits.clock = { clock.now }
        return limits
    }

    @Test("logins to one account: past the burst, 429 rate_limited with Retry-After, for right and wrong passwords")
    func perAccount() async throws {
        let clock = TestClock()
        try await withAPI(configure: { $0.rateLimits = Self.limits(clock) }) { api in
            let ana = try await api.register("Ana", email: "ana@example.com")
            for password in ["wrong-1", "wrong-2", "secret-password"] {
                let answer = try await api.call(
                    .post, "/v1/auth/login", json: ["email": ana.email, "password": password])
                #expect(answer.status != .tooManyRequests)
            }
            let head = api.head
            // Even the right password now waits, and is not checked (nothing appended, no bcrypt).
            let limited = try await api.call(
                .post, "/v1/auth/login", json: ["email": "ANA@example.com", "password": "secret-password"])
            #expect(limited.status == .tooManyRequests)
            #expect(limited.errorCode == "rate_limited")
            #expect(limited.headers[.retryAfter] == "30")
            #expect(api.head == head)
            // Another account is not held back by Ana's.
            let bo = try await api.register("Bo")
            #expect(
                try await api.call(.post, "/v1/auth/login", json: ["email": bo.email, "password": "secret-password"])
                    .status == .ok)

            clock.advance(.seconds(31))
            #expect(
                try await api.call(.post, "/v1/auth/login", json: ["email": ana.email, "password": "secret-password"])
                    .status == .ok)
            #expect(
                try await api.call(.post, "/v1/auth/login", json: ["email": ana.email, "password": "secret-password"])
                    .status == .tooManyRequests)
        }
    }

    @Test("sign-ups and logins from one address are limited over a real socket")
    func perAddress() async throws {
        let clock = TestClock()
        try await withAPI(.live, configure: { $0.rateLimits = Self.limits(clock) }) { api in
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

            // Five logins from this address, to two accounts (under each account's own limit), then no more.
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

    @Test("a limiter forgets refilled keys past its bound, and refuses new keys while none has refilled")
    func boundedMemory() {
        let clock = TestClock()
        let limiter = RateLimiter(.init(burst: 1, every: .seconds(10)), maximumKeys: 2, now: { clock.now })
        #expect(limiter.attempt("a") == nil)
        #expect(limiter.attempt("b") == nil)
        #expect(limiter.attempt("c") != nil, "two keys are spent; a third waits")
        clock.advance(.seconds(10))
        #expect(limiter.attempt("c") == nil, "a and b refilled and were forgotten")
        #expect(limiter.attempt("c") != nil)
    }
}
