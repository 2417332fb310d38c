import ChorusBackend
import ChorusHTTP
import Foundation
import HTTPTypes
import Testing

@Suite("API: auth")
struct AuthAPITests {
    @Test("register answers 201 with the profile (e-mail included) and a token that opens /v1/me")
    func register() async throws {
        try await withAPI { api in
            let answer = try await api.call(
                .post, "/v1/auth/register",
                json: [
                    "email": " Ana@Example.com ", "password": "secret1", "name": " Ana ", "major": "CS", "bio": "hi",
                ])
            #expect(answer.status == .created)
            let user = try #require(answer.object["user"] as? [String: Any])
            #expect(user["name"] as? String == "Ana")
            #expect(user["email"] as? String == "Ana@Example.com")
            #expect(user["isMe"] as? Bool == true && user["followers"] as? Int == 0)
            #expect(user.keys.contains("profileImage") && user["profileImage"] is NSNull)
            #expect(answer.position == api.head.rawValue)
            let token = try #require(answer.object["token"] as? String)
            let me = try await api.call(.get, "/v1/me", token: token)
            #expect(me.status == .ok && me.object["id"] as? String == user["id"] as? String)
            #expect(me.object["email"] as? String == "Ana@Example.com")
        }
    }

    @Test("sign-up errors: taken e-mail (any case), bad e-mail, weak password, bad name; each appends nothing")
    func registrationErrors() async throws {
        try await withAPI { api in
            _ = try await api.register("Ana", email: "ana@example.com")
            let head = api.head
            let cases: [([String: Any], HTTPResponse.Status, String)] = [
                (["email": "ANA@example.com", "password": "secret1", "name": "Other"], .conflict, "email_taken"),
                (
                    ["email": "not-an-email", "password": "secret1", "name": "A"], .unprocessableContent,
                    "invalid_email"
                ),
                (["email": "b@example.com", "password": "12345", "name": "B"], .unprocessableContent, "weak_password"),
                (
                    ["email": "b@example.com", "password": String(repeating: "x", count: 73), "name": "B"],
                    .unprocessableContent, "weak_password"
                ),
                (
                    ["email": "b@example.com", "password": "secret1", "name": "   "], .unprocessableContent,
                    "invalid_field"
                ),
                (
                    ["email": "b@example.com", "password": "secret1", "name": String(repeating: "가", count: 51)],
                    .unprocessableContent, "invalid_field"
                ),
                (["email": "b@example.com", "password": "secret1"], .badRequest, "bad_request"),
                (["email": "b@example.com", "password": 123456, "name": "B"], .badRequest, "bad_request"),
            ]
            for (body, status, code) in cases {
                let answer = try await api.call(.post, "/v1/auth/register", json: body)
                #expect(answer.status == status && answer.errorCode == code, "\(body) → \(answer.errorCode ?? "-")")
                let message = (answer.object["error"] as? [String: Any])?["message"] as? String ?? ""
                #expect(!message.isEmpty)
                if code == "invalid_field" { #expect(message.contains("name"), "the message names the field") }
            }
            #expect(api.head == head)
        }
    }

    @Test("login gives a new token; a wrong password or unknown e-mail is 401 invalid_credentials")
    func login() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana", email: "ana@example.com")
            let login = try await api.call(
                .post, "/v1/auth/login", json: ["email": "ANA@example.com", "password": "secret-password"])
            #expect(login.status == .ok)
            let token = try #require(login.object["token"] as? String)
            #expect(token != ana.token)
            #expect((login.object["user"] as? [String: Any])?["id"] as? String == ana.id)
            for body in [
                ["email": "ana@example.com", "password": "wrong-password"],
                ["email": "bo@example.com", "password": "secret-password"],
            ] {
                let refused = try await api.call(.post, "/v1/auth/login", json: body)
                #expect(refused.status == .unauthorized && refused.errorCode == "invalid_credentials")
            }
        }
    }

    @Test("logout revokes that token only; missing, malformed and forged tokens are 401 unauthorized")
    func logout() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana", email: "ana@example.com")
            let second = try #require(
                try await api.call(
                    .post, "/v1/auth/login", json: ["email": "ana@example.com", "password": "secret-password"]
                )
                .object["token"] as? String)
            let out = try await api.call(.post, "/v1/auth/logout", token: ana.token)
            #expect(out.status == .noContent && out.position != nil)
            #expect(try await api.call(.get, "/v1/me", token: ana.token).status == .unauthorized)
            #expect(try await api.call(.get, "/v1/me", token: second).status == .ok)

            let forged = String(ana.token.dropLast(3)) + "AAA"
            for token in [nil, "", "garbage", forged, String(repeating: "a", count: 10_000)] as [String?] {
                let answer = try await api.call(.get, "/v1/feed/home", token: token)
                #expect(answer.status == .unauthorized && answer.errorCode == "unauthorized")
            }
            let basic = try await api.call(.get, "/v1/me", headers: ["Authorization": "Basic YTpi"])
            #expect(basic.status == .unauthorized)

            // The scheme in any case, blanks around either part; nothing else.
            for header in ["bearer \(second)", "BEARER \(second)", "  Bearer   \(second)  ", "Bearer\t\(second)"] {
                #expect(
                    try await api.call(.get, "/v1/me", headers: ["Authorization": header]).status == .ok, "\(header)")
            }
            for header in ["Bearer", "Bearer ", "Bearer\(second)", "Bearerx \(second)", "Beare \(second)", "\(second)"]
            {
                #expect(
                    try await api.call(.get, "/v1/me", headers: ["Authorization": header]).status == .unauthorized,
                    "\(header)")
            }
        }
    }
}
