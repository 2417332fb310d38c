import ChorusBackend
import ChorusHTTP
import Foundation
import HTTPTypes
import Testing

/// Every route of openapi.yaml, who may call it, and proof that everyone else is refused.
@Suite("Authorization matrix")
struct AuthorizationMatrixTests {
    /// Who a route is open to.
    enum Audience: CustomStringConvertible {
        /// Anyone, with or without a token.
        case anyone
        /// Any signed-in user; nothing else (not the admin token) opens it.
        case user
        /// The admin token only; a user's token is 403, anything else 401.
        case admin

        var description: String {
            switch self {
            case .anyone: "anyone"
            case .user: "users"
            case .admin: "the admin"
            }
        }
    }

    /// Who calls.
    enum Caller: CaseIterable, CustomStringConvertible {
        case anonymous, forgedToken, user, admin

        var description: String {
            switch self {
            case .anonymous: "no token"
            case .forgedToken: "a forged token"
            case .user: "a user's token"
            case .admin: "the admin token"
            }
        }
    }

    struct Route: CustomStringConvertible {
        let method: HTTPRequest.Method
        let path: String
        let audience: Audience
        var json: [String: Any]? = nil

        var description: String { "\(method) \(path)" }
    }

    @Test("each route answers its audience, and refuses every other caller with 401 or 403 and appends nothing")
    func matrix() async throws {
        var options = APIFixture.options
        options.server.adminToken = "the-admin-token"
        try await withAPI(options: options) { api in
            let ana = try await api.register("Ana")
            let bo = try await api.register("Bo")
            let cy = try await api.register("Cy")
            let post = try await api.post(bo, "a post")
            // The user who calls each route is Ana: an edit needs a post of hers.
            let anasPost = try await api.post(ana, "Ana's post")
            let media = try await api.uploadImage(bo)
            _ = try await api.call(.post, "/v1/messages", token: bo.token, json: ["to": ana.id, "text": "hi"])
            // Ana deletes a post and a comment of her own.
            let doomed = try await api.post(ana, "Ana's regret")
            let comment = try await api.call(
                .post, "/v1/posts/\(post)/comments", token: ana.token, json: ["text": "Ana's second thought"])
            let commentID = try #require(comment.object["id"] as? String)
            // A report for the admin to resolve.
            let filed = try await api.call(
                .post, "/v1/reports", token: bo.token, json: ["postId": post, "reason": "other"])
            let reportID = try #require(filed.object["id"] as? String)
            // A notification of Ana's, for her to read.
            _ = try await api.call(.put, "/v1/users/\(ana.id)/follow", token: cy.token)
            let notificationID = try #require(
                try await api.call(.get, "/v1/notifications", token: ana.token).items.first?["id"] as? String)
            let bosHandle = try #require(
                try await api.call(.get, "/v1/users/\(bo.id)", token: ana.token).object["handle"] as? String)
            // A room of Bo's, for Ana to join, write to and leave.
            let roomMade = try await api.call(.post, "/v1/rooms", token: bo.token, json: ["name": "Bo's room"])
            let room = try #require(roomMade.object["id"] as? String)
            // A muted word of Ana's, for her to unmute.
            let muted = try await api.call(.post, "/v1/me/muted-words", token: ana.token, json: ["word": "matrix"])
            let mutedWord = try #require(muted.object["id"] as? String)
            // A second session of Ana's, for her to end.
            let second = try await api.call(
                .post, "/v1/auth/login", json: ["email": ana.email, "password": "secret-password"])
            let secondSession = String(try #require(second.object["token"] as? String).prefix { $0 != "." })
            // Ana's account private, with two requests to follow it, for her to accept and decline.
            _ = try await api.call(.patch, "/v1/me", token: ana.token, json: ["private": true])
            let dee = try await api.register("Dee")
            let eve = try await api.register("Eve")
            for asker in [dee, eve] { _ = try await api.call(.put, "/v1/users/\(ana.id)/follow", token: asker.token) }
            // Suspended and let back by the admin routes: a suspension ends the user's sessions.
            let fay = try await api.register("Fay")

            let routes: [Route] = [
                Route(method: .get, path: "/health", audience: .anyone),
                Route(method: .get, path: "/metrics", audience: .admin),
                Route(method: .get, path: "/openapi.yaml", audience: .anyone),
                Route(method: .get, path: "/v1/media/\(media)", audience: .anyone),
                Route(method: .get, path: "/v1/me", audience: .user),
                Route(method: .get, path: "/v1/me/sessions", audience: .user),
                Route(method: .get, path: "/v1/me/blocks", audience: .user),
                Route(method: .get, path: "/v1/me/mutes", audience: .user),
                Route(method: .get, path: "/v1/me/devices", audience: .user),
                Route(
                    method: .post, path: "/v1/me/devices", audience: .user, json: ["platform": "fcm", "token": "f1"]),
                Route(method: .get, path: "/v1/me/push-settings", audience: .user),
                Route(method: .patch, path: "/v1/me/push-settings", audience: .user, json: ["likes": "off"]),
                Route(method: .put, path: "/v1/users/\(cy.id)/mute", audience: .user),
                Route(method: .delete, path: "/v1/users/\(cy.id)/mute", audience: .user),
                Route(method: .put, path: "/v1/users/\(cy.id)/block", audience: .user),
                Route(method: .delete, path: "/v1/users/\(cy.id)/block", audience: .user),
                Route(method: .delete, path: "/v1/me/sessions/\(secondSession)", audience: .user),
                Route(
                    method: .post, path: "/v1/me/password", audience: .user,
                    json: ["currentPassword": "secret-password", "newPassword": "secret-password"]),
                Route(method: .post, path: "/v1/auth/password-reset", audience: .anyone, json: ["email": bo.email]),
                Route(method: .patch, path: "/v1/me", audience: .user, json: ["bio": "hello"]),
                Route(method: .get, path: "/v1/users/\(bo.id)", audience: .user),
                Route(method: .get, path: "/v1/users/by-handle/\(bosHandle)", audience: .user),
                Route(method: .get, path: "/v1/users/\(bo.id)/posts", audience: .user),
                Route(method: .get, path: "/v1/users/\(bo.id)/likes", audience: .user),
                Route(method: .get, path: "/v1/users/\(bo.id)/followers", audience: .user),
                Route(method: .get, path: "/v1/users/\(bo.id)/following", audience: .user),
                Route(method: .get, path: "/v1/search/users?q=b", audience: .user),
                Route(method: .put, path: "/v1/users/\(bo.id)/follow", audience: .user),
                Route(method: .delete, path: "/v1/users/\(bo.id)/follow", audience: .user),
                Route(method: .get, path: "/v1/me/follow-requests", audience: .user),
                Route(method: .post, path: "/v1/me/follow-requests/\(dee.id)/accept", audience: .user),
                Route(method: .post, path: "/v1/me/follow-requests/\(eve.id)/decline", audience: .user),
                Route(method: .post, path: "/v1/posts", audience: .user, json: ["text": "hello"]),
                Route(method: .get, path: "/v1/posts/\(post)", audience: .user),
                Route(method: .patch, path: "/v1/posts/\(anasPost)", audience: .user, json: ["text": "edited"]),
                Route(method: .put, path: "/v1/posts/\(post)/like", audience: .user),
                Route(method: .delete, path: "/v1/posts/\(post)/like", audience: .user),
                Route(method: .put, path: "/v1/posts/\(post)/repost", audience: .user),
                Route(method: .delete, path: "/v1/posts/\(post)/repost", audience: .user),
                Route(method: .put, path: "/v1/posts/\(post)/bookmark", audience: .user),
                Route(method: .delete, path: "/v1/posts/\(post)/bookmark", audience: .user),
                Route(method: .get, path: "/v1/me/bookmarks", audience: .user),
                Route(method: .get, path: "/v1/me/muted-words", audience: .user),
                Route(method: .post, path: "/v1/me/muted-words", audience: .user, json: ["word": "spoiler"]),
                Route(method: .delete, path: "/v1/me/muted-words/\(mutedWord)", audience: .user),
                Route(method: .get, path: "/v1/hashtags/tag/posts", audience: .user),
                Route(method: .get, path: "/v1/search/hashtags?q=t", audience: .user),
                Route(method: .get, path: "/v1/posts/\(post)/comments", audience: .user),
                Route(method: .post, path: "/v1/posts/\(post)/comments", audience: .user, json: ["text": "nice"]),
                Route(method: .delete, path: "/v1/posts/\(post)/comments/\(commentID)", audience: .user),
                Route(method: .delete, path: "/v1/posts/\(doomed)", audience: .user),
                Route(method: .get, path: "/v1/feed/home", audience: .user),
                Route(method: .get, path: "/v1/feed/following", audience: .user),
                Route(method: .get, path: "/v1/notifications", audience: .user),
                Route(
                    method: .post, path: "/v1/notifications/read", audience: .user,
                    json: ["upTo": notificationID]),
                Route(method: .post, path: "/v1/conversations/\(bo.id)/read", audience: .user),
                Route(method: .post, path: "/v1/messages", audience: .user, json: ["to": bo.id, "text": "hello"]),
                Route(method: .get, path: "/v1/conversations", audience: .user),
                Route(method: .get, path: "/v1/conversations/\(bo.id)/messages", audience: .user),
                Route(method: .post, path: "/v1/rooms", audience: .user, json: ["name": "Ana's room"]),
                Route(method: .get, path: "/v1/rooms", audience: .user),
                Route(method: .get, path: "/v1/rooms/\(room)", audience: .user),
                Route(method: .put, path: "/v1/rooms/\(room)/membership", audience: .user),
                Route(method: .post, path: "/v1/rooms/\(room)/messages", audience: .user, json: ["text": "hi"]),
                Route(method: .get, path: "/v1/rooms/\(room)/messages", audience: .user),
                Route(method: .delete, path: "/v1/rooms/\(room)/membership", audience: .user),
                Route(method: .get, path: "/v1/admin/projections", audience: .admin),
                Route(method: .get, path: "/v1/admin/webhooks", audience: .admin),
                Route(method: .get, path: "/v1/admin/push", audience: .admin),
                Route(method: .get, path: "/v1/admin/erasures", audience: .admin),
                Route(method: .get, path: "/v1/admin/reports", audience: .admin),
                Route(method: .post, path: "/v1/reports", audience: .user, json: ["userId": cy.id, "reason": "spam"]),
                Route(
                    method: .post, path: "/v1/admin/reports/\(reportID)/resolve", audience: .admin,
                    json: ["action": "dismiss"]),
                Route(method: .post, path: "/v1/admin/users/\(fay.id)/suspend", audience: .admin),
                Route(method: .post, path: "/v1/admin/users/\(cy.id)/unsuspend", audience: .admin),
                Route(method: .post, path: "/v1/admin/projections/rebuild", audience: .admin),
            ]
            for route in routes {
                for caller in Caller.allCases {
                    let token: String? =
                        switch caller {
                        case .anonymous: nil
                        case .forgedToken: "01m81svpp4e00a142xd0fmjp8z.bm90IGEgcmVhbCBtYWMgYXQgYWxsIG5vIG5vIG5v"
                        case .user: ana.token
                        case .admin: "the-admin-token"
                        }
                    let head = api.head
                    let answer = try await api.call(route.method, route.path, token: token, json: route.json)
                    let allowed =
                        switch (route.audience, caller) {
                        case (.anyone, _), (.user, .user), (.admin, .admin): true
                        default: false
                        }
                    if allowed {
                        #expect(answer.status.kind == .successful, "\(route) by \(caller): \(answer.status)")
                    } else {
                        let expected: HTTPResponse.Status =
                            route.audience == .admin && caller == .user ? .forbidden : .unauthorized
                        #expect(answer.status == expected, "\(route) by \(caller) must be refused with \(expected)")
                        #expect(api.head == head, "\(route) by \(caller) appended nothing")
                    }
                }
            }

            // Signing up and logging in are open to anyone, whatever token comes along.
            for (index, token) in [nil, "the-admin-token", ana.token].enumerated() {
                let signUp = try await api.call(
                    .post, "/v1/auth/register", token: token,
                    json: ["email": "new\(index)@example.com", "password": "secret-password", "name": "New"])
                #expect(signUp.status == .created, "register with \(token ?? "no token")")
                let login = try await api.call(
                    .post, "/v1/auth/login", token: token, json: ["email": bo.email, "password": "secret-password"])
                #expect(login.status == .ok, "login with \(token ?? "no token")")
            }

            // A reset token is the only key to its confirmation, whoever else signs the request.
            for token in [nil, "the-admin-token", ana.token] {
                let confirm = try await api.call(
                    .post, "/v1/auth/password-reset/confirm", token: token,
                    json: ["token": "\(bo.id).01m81svpp4e00a142xd0fmjp8z.AAAA", "newPassword": "secret-password"])
                #expect(confirm.status == .unprocessableContent && confirm.errorCode == "invalid_token")
            }

            // Live streams never end, so only their refusals are asked for here (LiveAPITests streams them).
            for token in [
                nil, "the-admin-token", "01m81svpp4e00a142xd0fmjp8z.bm90IGEgcmVhbCBtYWMgYXQgYWxsIG5vIG5vIG5v",
            ] {
                #expect(try await api.call(.get, "/v1/live?topics=notifications", token: token).status == .unauthorized)
            }

            // Logout ends the caller's own session, and only that one.
            #expect(try await api.call(.post, "/v1/auth/logout").status == .unauthorized)
            #expect(try await api.call(.post, "/v1/auth/logout", token: "the-admin-token").status == .unauthorized)
            #expect(try await api.call(.post, "/v1/auth/logout", token: ana.token).status == .noContent)
            #expect(try await api.call(.get, "/v1/me", token: ana.token).status == .unauthorized)
            #expect(try await api.call(.get, "/v1/me", token: bo.token).status == .ok)

            // Deleting an account takes its own session (and password); no other caller gets past the door.
            for token in [
                nil, "the-admin-token", "01m81svpp4e00a142xd0fmjp8z.bm90IGEgcmVhbCBtYWMgYXQgYWxsIG5vIG5vIG5v",
            ] {
                let head = api.head
                let refused = try await api.call(
                    .delete, "/v1/me", token: token, json: ["password": "secret-password"])
                #expect(refused.status == .unauthorized && api.head == head)
            }
            let deleted = try await api.call(.delete, "/v1/me", token: cy.token, json: ["password": "secret-password"])
            #expect(deleted.status == .accepted)
        }
    }

    @Test("what is one user's stays theirs: another's messages, notifications and edits are out of reach")
    func ownership() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let bo = try await api.register("Bo")
            let cy = try await api.register("Cy")
            _ = try await api.call(.post, "/v1/messages", token: ana.token, json: ["to": bo.id, "text": "for Bo only"])
            _ = try await api.call(.put, "/v1/users/\(ana.id)/follow", token: bo.token)

            // Cy asking for the conversation with Ana sees Cy's own (empty), never Ana and Bo's.
            let theirs = try await api.call(.get, "/v1/conversations/\(ana.id)/messages", token: cy.token)
            #expect(theirs.status == .ok)
            #expect(theirs.items.isEmpty)
            #expect(try await api.call(.get, "/v1/conversations", token: cy.token).items.isEmpty)
            #expect(try await api.call(.get, "/v1/notifications", token: cy.token).items.isEmpty)
            #expect(try await api.call(.get, "/v1/notifications", token: ana.token).items.count == 1)
            // A profile edit changes the caller's profile, whatever else is sent.
            let edit = try await api.call(.patch, "/v1/me", token: cy.token, json: ["name": "Not Ana"])
            #expect(edit.object["id"] as? String == cy.id)
            #expect(try await api.call(.get, "/v1/users/\(ana.id)", token: cy.token).object["name"] as? String == "Ana")
            // Only its author edits a post.
            let post = try await api.post(ana, "Ana's words")
            let head = api.head
            let forged = try await api.call(.patch, "/v1/posts/\(post)", token: cy.token, json: ["text": "Cy's words"])
            #expect(forged.status == .forbidden && forged.errorCode == "forbidden")
            #expect(api.head == head, "a refused edit appends nothing")
            #expect(
                try await api.call(.get, "/v1/posts/\(post)", token: cy.token).object["text"] as? String
                    == "Ana's words")
            // Only its author deletes a post; a comment, its author or the post's author.
            let deletion = try await api.call(.delete, "/v1/posts/\(post)", token: cy.token)
            #expect(deletion.status == .forbidden && deletion.errorCode == "forbidden")
            let bos = try await api.call(.post, "/v1/posts/\(post)/comments", token: bo.token, json: ["text": "Bo's"])
            let bosComment = "/v1/posts/\(post)/comments/\(bos.object["id"] as? String ?? "")"
            let commentHead = api.head
            let stranger = try await api.call(.delete, bosComment, token: cy.token)
            #expect(stranger.status == .forbidden && stranger.errorCode == "forbidden")
            #expect(api.head == commentHead, "refused deletions append nothing")
            #expect(try await api.call(.get, "/v1/posts/\(post)", token: cy.token).object["comments"] as? Int == 1)
        }
    }
}
