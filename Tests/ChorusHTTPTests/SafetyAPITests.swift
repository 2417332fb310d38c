import ChorusBackend
import ChorusHTTP
import Foundation
import HTTPTypes
import Testing

@Suite("API: blocks and mutes")
struct SafetyAPITests {
    @Test("a block works both ways at once: follows end, every write between the two is refused, each is hidden")
    func blockMatrix() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana Blocker")
            let bo = try await api.register("Bo Blocked")
            let cy = try await api.register("Cy Bystander")
            _ = try await api.call(.put, "/v1/users/\(ana.id)/follow", token: bo.token)
            _ = try await api.call(.put, "/v1/users/\(bo.id)/follow", token: ana.token)
            _ = try await api.call(.put, "/v1/users/\(ana.id)/follow", token: cy.token)
            let anas = try await api.post(ana, "by ana")
            let bos = try await api.post(bo, "by bo")
            _ = try await api.call(.put, "/v1/posts/\(anas)/like", token: bo.token)

            let block = try await api.call(.put, "/v1/users/\(bo.id)/block", token: ana.token)
            #expect(block.status == .ok && block.object["blocked"] as? Bool == true)
            let head = api.head
            #expect(try await api.call(.put, "/v1/users/\(bo.id)/block", token: ana.token).status == .ok)
            #expect(api.head == head, "a repeated block appends nothing")

            // The follows between them ended; Cy's stays.
            let anaProfile = try await api.call(.get, "/v1/users/\(ana.id)", token: cy.token).object
            #expect(anaProfile["followers"] as? Int == 1 && anaProfile["following"] as? Int == 0)

            // Every write either could make towards the other is refused, and appends nothing.
            let writes: [(String, HTTPRequest.Method, String, [String: Any]?)] = [
                (bo.token, .put, "/v1/users/\(ana.id)/follow", nil),
                (bo.token, .put, "/v1/posts/\(anas)/like", nil),
                (bo.token, .post, "/v1/posts/\(anas)/comments", ["text": "hey"]),
                (bo.token, .post, "/v1/posts", ["repostOf": anas]),
                (bo.token, .post, "/v1/posts", ["repostOf": anas, "text": "quoting"]),
                (bo.token, .post, "/v1/messages", ["to": ana.id, "text": "hello?"]),
                (ana.token, .put, "/v1/users/\(bo.id)/follow", nil),
                (ana.token, .put, "/v1/posts/\(bos)/like", nil),
                (ana.token, .post, "/v1/posts/\(bos)/comments", ["text": "hm"]),
                (ana.token, .post, "/v1/messages", ["to": bo.id, "text": "bye"]),
            ]
            for (token, method, path, json) in writes {
                let answer = try await api.call(method, path, token: token, json: json)
                #expect(answer.status == .forbidden && answer.errorCode == "blocked", "\(method) \(path)")
            }
            #expect(api.head == head)

            // The blocked user finds nothing of the blocker.
            for path in [
                "/v1/users/\(ana.id)", "/v1/users/\(ana.id)/posts", "/v1/users/\(ana.id)/likes",
                "/v1/users/\(ana.id)/followers", "/v1/users/\(ana.id)/following", "/v1/posts/\(anas)",
            ] {
                #expect(try await api.call(.get, path, token: bo.token).status == .notFound, "\(path)")
            }
            func ids(_ path: String, _ token: String) async throws -> [String] {
                try await api.call(.get, path, token: token).items.compactMap { $0["id"] as? String }
            }
            #expect(try await ids("/v1/feed/home", bo.token) == [bos])
            #expect(try await ids("/v1/feed/home", ana.token) == [anas])
            #expect(try await ids("/v1/search/users?q=ana", bo.token).isEmpty)
            #expect(try await ids("/v1/search/users?q=bo", ana.token).isEmpty)
            #expect(try await ids("/v1/users/\(cy.id)/following", bo.token).isEmpty, "Cy follows Ana: hidden from Bo")
            let notifications = try await api.call(.get, "/v1/notifications", token: ana.token).items
            #expect(
                notifications.allSatisfy { ($0["actor"] as? [String: Any])?["id"] as? String != bo.id },
                "nothing Bo did notifies Ana any more")
            #expect(!notifications.isEmpty, "Cy's follow still does")

            // The blocker still sees the profile, marked, and the list.
            let seen = try await api.call(.get, "/v1/users/\(bo.id)", token: ana.token).object
            #expect(seen["isBlocked"] as? Bool == true && seen["isMuted"] as? Bool == false)
            #expect(try await ids("/v1/me/blocks", ana.token) == [bo.id])
            #expect(try await ids("/v1/me/blocks", bo.token).isEmpty)

            // Lifted: they may follow again.
            let lifted = try await api.call(.delete, "/v1/users/\(bo.id)/block", token: ana.token)
            #expect(lifted.status == .ok && lifted.object["blocked"] as? Bool == false)
            #expect(try await api.call(.put, "/v1/users/\(ana.id)/follow", token: bo.token).status == .ok)
            #expect(try await api.call(.get, "/v1/users/\(ana.id)", token: bo.token).status == .ok)
            #expect(try await ids("/v1/me/blocks", ana.token).isEmpty)

            let selfBlock = try await api.call(.put, "/v1/users/\(ana.id)/block", token: ana.token)
            #expect(selfBlock.status == .unprocessableContent)
            let unknown = try await api.call(.put, "/v1/users/01m81svpp4e00a142xd0fmjp8z/block", token: ana.token)
            #expect(unknown.status == .notFound)
        }
    }

    @Test("a mute hides the muted user's posts and notifications from the muter, and nothing else")
    func mute() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let cy = try await api.register("Cy")
            _ = try await api.call(.put, "/v1/users/\(cy.id)/follow", token: ana.token)
            let anas = try await api.post(ana, "by ana")
            let cys = try await api.post(cy, "by cy")
            let muted = try await api.call(.put, "/v1/users/\(cy.id)/mute", token: ana.token)
            #expect(muted.status == .ok && muted.object["muted"] as? Bool == true)
            _ = try await api.call(.put, "/v1/posts/\(anas)/like", token: cy.token)

            func ids(_ path: String, _ token: String) async throws -> [String] {
                try await api.call(.get, path, token: token).items.compactMap { $0["id"] as? String }
            }
            #expect(try await ids("/v1/feed/home", ana.token) == [anas])
            #expect(try await ids("/v1/feed/following", ana.token) == [anas])
            #expect(try await api.call(.get, "/v1/notifications", token: ana.token).items.isEmpty)
            #expect(try await ids("/v1/users/\(cy.id)/posts", ana.token) == [cys], "the profile still shows them")
            #expect(try await api.call(.get, "/v1/users/\(cy.id)", token: ana.token).object["isMuted"] as? Bool == true)
            #expect(try await ids("/v1/me/mutes", ana.token) == [cy.id])
            #expect(try await ids("/v1/feed/home", cy.token) == [cys, anas], "Cy sees everything")
            #expect(
                try await api.call(.post, "/v1/messages", token: cy.token, json: ["to": ana.id, "text": "hi"]).status
                    == .created, "a mute refuses nothing")

            let unmuted = try await api.call(.delete, "/v1/users/\(cy.id)/mute", token: ana.token)
            #expect(unmuted.object["muted"] as? Bool == false)
            #expect(try await ids("/v1/feed/home", ana.token) == [cys, anas])
            #expect(try await api.call(.get, "/v1/notifications", token: ana.token).items.count == 1)
        }
    }
}
