import ChorusDomain
import ChorusLog
import ChorusTestSupport
import Foundation
import Testing

@Suite("Sessions and tokens")
struct SessionTests {
    @Test("registration and login start sessions; a wrong password starts none; logout ends one, once")
    func sessionLifecycle() async throws {
        try await withExecutor { chorus, _ in
            let registered = try await chorus.execute(
                .registerUser(email: "ana@example.com", password: "secret-password", name: "Ana"))
            let first = try #require(registered.session)
            let ana = UserID(unchecked: try #require(registered.createdID))
            #expect(first.user == ana)
            #expect(try chorus.user(ofSession: first.session) == ana)

            let headBefore = chorus.log.head
            #expect(
                await domainErrorCode {
                    _ = try await chorus.execute(.logIn(email: "ana@example.com", password: "wrong-password"))
                } == .invalidCredentials)
            #expect(
                await domainErrorCode {
                    _ = try await chorus.execute(.logIn(email: "nobody@example.com", password: "secret-password"))
                } == .invalidCredentials)
            #expect(chorus.log.head == headBefore, "a refused login appends nothing")

            let login = try await chorus.execute(.logIn(email: " ANA@example.com", password: "secret-password"))
            let second = try #require(login.session)
            #expect(second.user == ana && second.session != first.session)
            #expect(try chorus.user(ofSession: second.session) == ana)

            #expect(try await chorus.execute(.logOut(user: ana, session: first.session)).appended)
            #expect(try chorus.user(ofSession: first.session) == nil, "revoked")
            #expect(try chorus.user(ofSession: second.session) == ana, "the other session lives on")
            #expect(
                try await !chorus.execute(.logOut(user: ana, session: first.session)).appended,
                "a repeat changes nothing")

            let bo = try await chorus.register("Bo")
            #expect(try await !chorus.execute(.logOut(user: bo, session: second.session)).appended, "not Bo's to end")
            #expect(try chorus.user(ofSession: second.session) == ana)
        }
    }

    @Test("a session found valid before ends at once through each way a session ends")
    func knownSessionsEnd() async throws {
        try await withExecutor { chorus, _ in
            let registered = try await chorus.execute(
                .registerUser(email: "ana@example.com", password: "secret-password", name: "Ana"))
            let first = try #require(registered.session)
            var sessions = [first.session]
            for _ in 0..<2 {
                let login = try await chorus.execute(.logIn(email: "ana@example.com", password: "secret-password"))
                sessions.append(try #require(login.session).session)
            }
            let boRegistered = try await chorus.execute(
                .registerUser(email: "bo@example.com", password: "secret-password", name: "Bo"))
            let bo = try #require(boRegistered.session)
            // Found once each, so that the next answers may come from what was found.
            for session in sessions + [bo.session] { #expect(try chorus.user(ofSession: session) != nil) }

            _ = try await chorus.execute(
                .changePassword(
                    user: first.user, session: sessions[0], currentPassword: "secret-password",
                    newPassword: "another-password"))
            #expect(try chorus.user(ofSession: sessions[0]) == first.user, "the session that changed it lives on")
            #expect(try chorus.user(ofSession: sessions[1]) == nil, "ended by the password change")
            #expect(try chorus.user(ofSession: sessions[2]) == nil, "ended by the password change")
            #expect(try chorus.user(ofSession: bo.session) == bo.user, "another user's session")

            _ = try await chorus.execute(.deleteAccount(user: first.user, password: "another-password"))
            #expect(try chorus.user(ofSession: sessions[0]) == nil, "ended by the account's deletion")
            #expect(try chorus.user(ofSession: bo.session) == bo.user)
            let expired = EventTime(millisecondsSince1970: bo.expiresAt.millisecondsSince1970)
            #expect(try chorus.user(ofSession: bo.session, at: expired) == nil, "expired, though found before")
        }
    }

    @Test("a session expires 30 days after it starts")
    func expiry() async throws {
        try await withExecutor { chorus, _ in
            // The session starts between these two moments, however long the registration takes on a loaded machine.
            let before = EventTime.now.millisecondsSince1970
            let result = try await chorus.execute(.registerUser(email: "a@example.com", password: "secret1", name: "A"))
            let after = EventTime.now.millisecondsSince1970
            let session = try #require(result.session)
            let lifetime = Int64(30 * 24 * 3600 * 1000)
            #expect((before + lifetime...after + lifetime).contains(session.expiresAt.millisecondsSince1970))
            let justBefore = EventTime(millisecondsSince1970: session.expiresAt.millisecondsSince1970 - 1)
            #expect(try chorus.user(ofSession: session.session, at: justBefore) == session.user)
            #expect(try chorus.user(ofSession: session.session, at: session.expiresAt) == nil)
        }
    }

    @Test("a retried registration under one idempotency key gets the same session only with the same password")
    func registrationReplay() async throws {
        try await withExecutor { chorus, _ in
            let command = Command.registerUser(email: "a@example.com", password: "secret1", name: "A")
            let first = try await chorus.execute(command, idempotencyKey: "signup-1")
            let head = chorus.log.head
            #expect(try await chorus.execute(command, idempotencyKey: "signup-1") == first)
            #expect(
                await domainErrorCode {
                    _ = try await chorus.execute(
                        .registerUser(email: "a@example.com", password: "someone else", name: "A"),
                        idempotencyKey: "signup-1")
                } == .idempotencyConflict)
            #expect(chorus.log.head == head)
        }
    }

    @Test("tokens carry a session id and a MAC: tampered, foreign or malformed tokens name no session")
    func tokens() {
        let tokens = SessionTokens(secret: SessionTokens.makeSecret())
        let session = SessionID.make()
        let token = tokens.token(for: session)
        #expect(tokens.session(fromToken: token) == session)
        #expect(token.hasPrefix(session.rawValue + "."))

        var tampered = Array(token.utf8)
        tampered[tampered.count - 2] =
            tampered[tampered.count - 2] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(tokens.session(fromToken: String(decoding: tampered, as: UTF8.self)) == nil)
        let other = SessionID.make()
        let swapped = other.rawValue + token.drop(while: { $0 != "." })
        #expect(tokens.session(fromToken: swapped) == nil, "a MAC belongs to one session")
        #expect(SessionTokens(secret: SessionTokens.makeSecret()).session(fromToken: token) == nil, "another secret")
        for malformed in [
            "", ".", session.rawValue, session.rawValue + ".", "../../etc.passwd", String(repeating: "a", count: 5000),
        ] {
            #expect(tokens.session(fromToken: malformed) == nil)
        }
    }
}

@Suite("Base64URL")
struct Base64URLTests {
    @Test("round-trips every length; matches Foundation's base64 with the URL alphabet and no padding")
    func roundTrip() {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<70 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let text = Base64URL.encode(bytes)
            let foundation = Data(bytes).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            #expect(text == foundation)
            #expect(Base64URL.decode(text) == bytes)
        }
    }

    @Test("refuses other alphabets, padding, impossible lengths and stray bits")
    func refusals() {
        for text in ["a+b/", "ab==", "abcde", "a", "AB", "ab c", "ключ"] {
            #expect(Base64URL.decode(text) == nil, "\(text)")
        }
        #expect(Base64URL.decode("AA") == [0])
    }
}
