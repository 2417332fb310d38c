import ChorusBackend
import ChorusDomain
import ChorusHTTP
import ChorusLog
import ChorusTestSupport
import Foundation
import HTTPTypes
import Testing

@Suite("API: account deletion")
struct AccountDeletionAPITests {
    @Test(
        "deleting an account needs the password, takes out everything it wrote and every follow, shows it as deleted to partners, frees the e-mail, and destroys its key"
    )
    func deleteAccount() async throws {
        var options = APIFixture.options
        options.server.adminToken = "admin"
        try await withAPI(options: options) { api in
            let ana = try await api.register("Ana")
            let bo = try await api.register("Bo")
            let post = try await api.post(ana, "Ana's post")
            let bosPost = try await api.post(bo, "Bo's post")
            #expect(
                try await api.call(.post, "/v1/posts/\(bosPost)/comments", token: ana.token, json: ["text": "hi"])
                    .status == .created)
            #expect(try await api.call(.put, "/v1/posts/\(bosPost)/like", token: ana.token).status == .ok)
            #expect(try await api.call(.put, "/v1/users/\(ana.id)/follow", token: bo.token).status == .ok)
            #expect(try await api.call(.put, "/v1/users/\(bo.id)/follow", token: ana.token).status == .ok)
            #expect(
                try await api.call(.post, "/v1/messages", token: ana.token, json: ["to": bo.id, "text": "secret note"])
                    .status == .created)

            let head = api.head
            let wrong = try await api.call(.delete, "/v1/me", token: ana.token, json: ["password": "not-it"])
            #expect(wrong.status == .unprocessableContent && wrong.errorCode == "wrong_password")
            #expect(api.head == head, "a refusal appends nothing")

            let deleted = try await api.call(.delete, "/v1/me", token: ana.token, json: ["password": "secret-password"])
            #expect(deleted.status == .accepted && deleted.object["erasure"] as? String == "pending")
            #expect(try api.backend.keys.isDestroyed(UserID(unchecked: ana.id)), "the key goes with the deletion")

            #expect(try await api.call(.get, "/v1/me", token: ana.token).status == .unauthorized, "its sessions end")
            #expect(try await api.call(.get, "/v1/users/\(ana.id)", token: bo.token).status == .gone)
            #expect(try await api.call(.get, "/v1/posts/\(post)", token: bo.token).status == .notFound)
            let bosView = try await api.call(.get, "/v1/posts/\(bosPost)", token: bo.token)
            #expect(bosView.object["likes"] as? Int == 0 && bosView.object["comments"] as? Int == 0)
            let profile = try await api.call(.get, "/v1/users/\(bo.id)", token: bo.token)
            #expect(profile.object["followers"] as? Int == 0 && profile.object["following"] as? Int == 0)
            let search = try await api.call(.get, "/v1/search/users?q=Ana", token: bo.token)
            #expect(!search.items.contains { $0["id"] as? String == ana.id })

            let messages = try await api.call(.get, "/v1/conversations/\(ana.id)/messages", token: bo.token)
            let message = try #require(messages.items.first)
            #expect(message["text"] is NSNull, "the deleted user's message keeps its place, not its text")
            let from = try #require(message["from"] as? [String: Any])
            #expect(from["deleted"] as? Bool == true && from["name"] as? String == "" && from["profileImage"] is NSNull)

            let login = try await api.call(
                .post, "/v1/auth/login", json: ["email": ana.email, "password": "secret-password"])
            #expect(login.status == .unauthorized)
            let again = try await api.register("Ana again", email: ana.email)
            #expect(again.id != ana.id, "the e-mail signs up again, as a new account")

            let erasures = try await api.call(.get, "/v1/admin/erasures", token: "admin")
            let listed = try #require(erasures.items.first { $0["userId"] as? String == ana.id })
            #expect(listed["requestedAt"] is String && listed["completedAt"] is NSNull)
        }
    }
}
