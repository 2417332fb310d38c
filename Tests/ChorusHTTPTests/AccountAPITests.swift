import ChorusBackend
import ChorusDomain
import ChorusHTTP
import ChorusLog
import ChorusTestSupport
import Foundation
import HTTPTypes
import Testing

@Suite("API: passwords and sessions")
struct AccountAPITests {
    @Test("changing the password needs the current one, ends every other session and keeps the caller's")
    func changePassword() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let phone = try await api.logIn(ana)
            let head = api.head
            let wrong = try await api.call(
                .post, "/v1/me/password", token: ana.token,
                json: ["currentPassword": "not-it", "newPassword": "a new password"])
            #expect(wrong.status == .unprocessableContent && wrong.errorCode == "wrong_password")
            let weak = try await api.call(
                .post, "/v1/me/password", token: ana.token,
                json: ["currentPassword": "secret-password", "newPassword": "short"])
            #expect(weak.status == .unprocessableContent && weak.errorCode == "weak_password")
            #expect(api.head == head, "refusals append nothing")

            let changed = try await api.call(
                .post, "/v1/me/password", token: ana.token,
                json: ["currentPassword": "secret-password", "newPassword": "a new password"])
            #expect(changed.status == .noContent && changed.position == api.head.rawValue)
            #expect(try await api.call(.get, "/v1/me", token: ana.token).status == .ok, "the caller's session goes on")
            #expect(try await api.call(.get, "/v1/me", token: phone).status == .unauthorized, "the others end")
            let old = try await api.call(
                .post, "/v1/auth/login", json: ["email": ana.email, "password": "secret-password"])
            #expect(old.status == .unauthorized)
            let new = try await api.call(
                .post, "/v1/auth/login", json: ["email": ana.email, "password": "a new password"])
            #expect(new.status == .ok)
        }
    }

    @Test("the sessions list shows each live session once, newest first, pages, and ends one of them")
    func sessions() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let laptop = try await api.logIn(ana)
            let phone = try await api.logIn(ana)
            let bo = try await api.register("Bo")

            let all = try await api.call(.get, "/v1/me/sessions", token: laptop, headers: [:])
            #expect(all.status == .ok && all.items.count == 3)
            #expect(all.items.map { $0["current"] as? Bool } == [false, true, false], "newest first: phone, laptop")
            let stamp = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/
            for item in all.items {
                let created = try #require(item["createdAt"] as? String)
                let seen = try #require(item["lastSeenAt"] as? String)
                #expect(created.wholeMatch(of: stamp) != nil && seen >= created)
            }
            let ids = all.items.compactMap { $0["id"] as? String }
            let first = try await api.call(.get, "/v1/me/sessions?limit=2", token: ana.token)
            let cursor = try #require(first.object["nextCursor"] as? String)
            let second = try await api.call(.get, "/v1/me/sessions?limit=2&cursor=\(cursor)", token: ana.token)
            #expect((first.items + second.items).compactMap { $0["id"] as? String } == ids)
            #expect(second.object["nextCursor"] is NSNull)

            let phoneSession = ids[0]
            let ended = try await api.call(.delete, "/v1/me/sessions/\(phoneSession)", token: laptop)
            #expect(ended.status == .noContent)
            #expect(try await api.call(.get, "/v1/me", token: phone).status == .unauthorized)
            #expect(try await api.call(.get, "/v1/me/sessions", token: laptop).items.count == 2)
            let again = try await api.call(.delete, "/v1/me/sessions/\(phoneSession)", token: laptop)
            #expect(again.status == .notFound, "an ended session is no longer listed")
            let head = api.head
            let theirs = try await api.call(.delete, "/v1/me/sessions/\(ids[1])", token: bo.token)
            #expect(theirs.status == .notFound && api.head == head, "another user's session is out of reach")
            #expect(try await api.call(.get, "/v1/me", token: laptop).status == .ok)
        }
    }

    @Test("a reset is answered 202 for any e-mail; its token sets a new password once and ends every session")
    func reset() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let head = api.head
            let unknown = try await api.call(
                .post, "/v1/auth/password-reset", json: ["email": "nobody@example.com"])
            #expect(unknown.status == .accepted && unknown.bytes.isEmpty)
            // No account has it, and one event is appended as for an account: the log's head tells no one.
            #expect(api.head.rawValue == head.rawValue + 1)
            let unmatched = try #require(try api.backend.log.read(from: api.head, limit: 1).first)
            #expect(unmatched.type == "PasswordResetUnmatched" && unmatched.stream.rawValue == "password-resets")
            let known = try await api.call(
                .post, "/v1/auth/password-reset", json: ["email": ana.email.uppercased()])
            #expect(known.status == .accepted && known.bytes == unknown.bytes && known.headers == unknown.headers)
            #expect(api.head.rawValue == head.rawValue + 2)
            let recorded = try #require(try api.backend.log.read(from: api.head, limit: 1).first)
            guard
                case .passwordResetRequested(let requested) = try DomainEvent(
                    decoding: recorded, keys: TestDataKeys.shared)
            else {
                Issue.record("not a reset: \(recorded.type)")
                return
            }
            #expect(requested.user.rawValue == ana.id)
            let lifetime = requested.expiresAt.millisecondsSince1970 - recorded.recordedAt.millisecondsSince1970
            #expect(abs(lifetime - 3_600_000) < 1_000, "valid one hour: \(lifetime) ms")
            let token = api.backend.tokens.resetToken(user: requested.user, reset: requested.reset)

            let forged = String(token.dropLast(2)) + (token.hasSuffix("AA") ? "AB" : "AA")
            for bad in [forged, "not a token", ""] {
                let answer = try await api.call(
                    .post, "/v1/auth/password-reset/confirm", json: ["token": bad, "newPassword": "brand new one"])
                #expect(answer.status == .unprocessableContent && answer.errorCode == "invalid_token", "\(bad)")
            }
            let confirmed = try await api.call(
                .post, "/v1/auth/password-reset/confirm", json: ["token": token, "newPassword": "brand new one"])
            #expect(confirmed.status == .noContent)
            #expect(try await api.call(.get, "/v1/me", token: ana.token).status == .unauthorized, "every session ends")
            let login = try await api.call(
                .post, "/v1/auth/login", json: ["email": ana.email, "password": "brand new one"])
            #expect(login.status == .ok)
            let reused = try await api.call(
                .post, "/v1/auth/password-reset/confirm", json: ["token": token, "newPassword": "another one"])
            #expect(reused.status == .unprocessableContent && reused.errorCode == "invalid_token", "single use")
        }
    }

    @Test("reset requests are limited per account, however its e-mail is spelt")
    func resetRateLimits() async throws {
        // The default limits on a clock that stands still: no try comes back while the test runs, however slow the
        // machine (one every 30 s; on a loaded machine these twelve requests once took longer).
        var limits = RateLimits()
        let frozen = ContinuousClock.now
        limits.clock = { frozen }
        var options = APIFixture.options
        options.server.rateLimits = limits
        try await withAPI(options: options) { api in
            let ana = try await api.register("Ana")
            var statuses: [HTTPResponse.Status] = []
            for spelling in [ana.email, " \(ana.email)", ana.email.uppercased(), "\t\(ana.email)", "\(ana.email)\n"] {
                statuses.append(
                    try await api.call(.post, "/v1/auth/password-reset", json: ["email": spelling]).status)
            }
            #expect(statuses.allSatisfy { $0 == .accepted })
            // Five for the account, however its e-mail is spelt.
            let limited = try await api.call(.post, "/v1/auth/password-reset", json: ["email": " \(ana.email) "])
            #expect(limited.status == .tooManyRequests && limited.errorCode == "rate_limited")
            #expect(limited.headers[.retryAfter] != nil)
        }
    }
}

extension APIFixture {
    /// Logs `user` in again: a new session's token.
    func logIn(_ user: User, password: String = "secret-password") async throws -> String {
        let answer = try await call(.post, "/v1/auth/login", json: ["email": user.email, "password": password])
        guard answer.status == .ok, let token = answer.object["token"] as? String else {
            throw FixtureError("the login of \(user.email) answered \(answer.status)")
        }
        return token
    }
}
