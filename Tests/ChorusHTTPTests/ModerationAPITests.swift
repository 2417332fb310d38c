import ChorusBackend
import ChorusHTTP
import Foundation
import HTTPTypes
import Testing

@Suite("API: reports and suspensions")
struct ModerationAPITests {
    @Test("reports go to the admins' queue; resolving removes the content, or suspends its author until lifted")
    func reportsAndSuspension() async throws {
        var options = APIFixture.options
        options.server.adminToken = "admin"
        try await withAPI(options: options) { api in
            let ana = try await api.register("Ana")
            let bo = try await api.register("Bo Troll")
            let cy = try await api.register("Cy")
            _ = try await api.call(.put, "/v1/users/\(bo.id)/follow", token: cy.token)
            let spam = try await api.post(bo, "buy now")
            let rude = try await api.post(bo, "rude words")
            let comment = try #require(
                try await api.call(.post, "/v1/posts/\(spam)/comments", token: bo.token, json: ["text": "me too"])
                    .object["id"] as? String)

            func report(_ json: [String: Any]) async throws -> APIFixture.Answer {
                try await api.call(.post, "/v1/reports", token: ana.token, json: json)
            }
            let first = try await report(["postId": spam, "reason": "spam", "details": "ads"])
            #expect(first.status == .created)
            let onComment = try await report(["commentId": comment, "reason": "other"])
            let onUser = try await report(["userId": bo.id, "reason": "abuse"])
            let head = api.head
            for bad in [
                ["reason": "spam"], ["postId": spam, "userId": bo.id, "reason": "spam"],
                ["postId": spam, "reason": "boring"], ["commentId": "01m81svpp4e00a142xd0fmjp8z", "reason": "spam"],
            ] as [[String: Any]] {
                let answer = try await report(bad)
                #expect(answer.status == .unprocessableContent, "\(bad): \(answer.status)")
            }
            #expect(api.head == head, "refused reports append nothing")

            let queue = try await api.call(.get, "/v1/admin/reports", token: "admin")
            #expect(queue.items.count == 3)
            #expect(queue.items.first?["reason"] as? String == "abuse", "newest first")
            #expect((queue.items.last?["target"] as? [String: Any])?["id"] as? String == spam)
            #expect(try await api.call(.get, "/v1/admin/reports", token: ana.token).status == .forbidden)

            // Removing the content deletes the post.
            let firstID = try #require(first.object["id"] as? String)
            let removed = try await api.call(
                .post, "/v1/admin/reports/\(firstID)/resolve", token: "admin", json: ["action": "remove_content"])
            #expect(removed.status == .ok && removed.object["resolution"] as? String == "remove_content")
            #expect(try await api.call(.get, "/v1/posts/\(spam)", token: cy.token).status == .notFound)
            let again = try await api.call(
                .post, "/v1/admin/reports/\(firstID)/resolve", token: "admin", json: ["action": "dismiss"])
            #expect(again.status == .ok && again.object["resolution"] as? String == "remove_content", "changes nothing")
            let commentID = try #require(onComment.object["id"] as? String)
            _ = try await api.call(
                .post, "/v1/admin/reports/\(commentID)/resolve", token: "admin", json: ["action": "dismiss"])
            #expect(try await api.call(.get, "/v1/admin/reports?state=resolved", token: "admin").items.count == 2)

            // Suspending the reported user: sessions end, login refused, content hidden as if deleted.
            let userReport = try #require(onUser.object["id"] as? String)
            let suspended = try await api.call(
                .post, "/v1/admin/reports/\(userReport)/resolve", token: "admin", json: ["action": "suspend_user"])
            #expect(suspended.status == .ok)
            #expect(try await api.call(.get, "/v1/me", token: bo.token).status == .unauthorized)
            let login = try await api.call(
                .post, "/v1/auth/login", json: ["email": bo.email, "password": "secret-password"])
            #expect(login.status == .forbidden && login.errorCode == "suspended")
            #expect(try await api.call(.get, "/v1/posts/\(rude)", token: cy.token).status == .notFound)
            #expect(try await api.call(.get, "/v1/users/\(bo.id)", token: cy.token).status == .notFound)
            #expect(try await api.call(.get, "/v1/feed/following", token: cy.token).items.isEmpty)
            #expect(try await api.call(.get, "/v1/search/users?q=troll", token: cy.token).items.isEmpty)

            let lifted = try await api.call(.post, "/v1/admin/users/\(bo.id)/unsuspend", token: "admin")
            #expect(lifted.status == .ok && lifted.object["suspended"] as? Bool == false)
            #expect(
                try await api.call(.post, "/v1/auth/login", json: ["email": bo.email, "password": "secret-password"])
                    .status == .ok)
            #expect(try await api.call(.get, "/v1/posts/\(rude)", token: cy.token).status == .ok)
            let unknown = try await api.call(
                .post, "/v1/admin/reports/01m81svpp4e00a142xd0fmjp8z/resolve", token: "admin",
                json: ["action": "dismiss"])
            #expect(unknown.status == .notFound)
        }
    }

    @Test(
        "an admin suspends a user without a report: sessions end, login refused, content hidden; again changes nothing")
    func suspendWithoutReport() async throws {
        try await withAPI { api in
            let admin = APIFixture.adminToken
            let bo = try await api.register("Bo")
            let cy = try await api.register("Cy")
            let post = try await api.post(bo, "still here?")
            #expect(try await api.call(.post, "/v1/admin/users/\(bo.id)/suspend", token: bo.token).status == .forbidden)
            let suspended = try await api.call(.post, "/v1/admin/users/\(bo.id)/suspend", token: admin)
            #expect(suspended.status == .ok && suspended.object["suspended"] as? Bool == true)
            #expect(try await api.call(.get, "/v1/me", token: bo.token).status == .unauthorized)
            let login = try await api.call(
                .post, "/v1/auth/login", json: ["email": bo.email, "password": "secret-password"])
            #expect(login.status == .forbidden && login.errorCode == "suspended")
            #expect(try await api.call(.get, "/v1/posts/\(post)", token: cy.token).status == .notFound)
            let head = api.head
            let again = try await api.call(.post, "/v1/admin/users/\(bo.id)/suspend", token: admin)
            #expect(again.status == .ok && again.object["suspended"] as? Bool == true && api.head == head)
            let unknown = try await api.call(.post, "/v1/admin/users/01m81svpp4e00a142xd0fmjp8z/suspend", token: admin)
            #expect(unknown.status == .notFound)
        }
    }
}
