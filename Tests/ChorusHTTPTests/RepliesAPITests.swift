import ChorusTestSupport
import Foundation
import HTTPTypes
import Testing

@Suite("API: who may reply")
struct RepliesAPITests {
    @Test(
        "a post's replies let everyone, the users its author follows, or no one else comment; its author always may; a refusal appends nothing"
    )
    func whoMayReply() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let bo = try await api.register("Bo")
            let cy = try await api.register("Cy")
            _ = try await api.call(.put, "/v1/users/\(bo.id)/follow", token: ana.token)
            // Cy follows Ana, which lets Cy nothing: it is whom the author follows that counts.
            _ = try await api.call(.put, "/v1/users/\(ana.id)/follow", token: cy.token)

            let created = try await api.call(
                .post, "/v1/posts", token: ana.token, json: ["text": "friends only", "replies": "following"])
            #expect(created.status == .created, "\(created.object)")
            #expect(created.object["replies"] as? String == "following")
            let post = try #require(created.object["id"] as? String)
            let comments = "/v1/posts/\(post)/comments"

            #expect(try await api.call(.post, comments, token: bo.token, json: ["text": "hi"]).status == .created)
            #expect(try await api.call(.post, comments, token: ana.token, json: ["text": "me"]).status == .created)
            var head = api.head
            let refused = try await api.call(.post, comments, token: cy.token, json: ["text": "let me in"])
            #expect(refused.status == .forbidden && refused.errorCode == "replies_restricted", "\(refused.object)")
            #expect(api.head == head, "a refusal appends nothing")

            // Turned off: only the author; an edit of who may reply alone is no edit of what the post says.
            let closed = try await api.call(.patch, "/v1/posts/\(post)", token: ana.token, json: ["replies": "nobody"])
            #expect(closed.status == .ok, "\(closed.object)")
            #expect(closed.object["replies"] as? String == "nobody")
            #expect(closed.object["editedAt"] is NSNull)
            head = api.head
            let shut = try await api.call(.post, comments, token: bo.token, json: ["text": "again"])
            #expect(shut.status == .forbidden && shut.errorCode == "replies_restricted")
            #expect(api.head == head)
            let own = try await api.call(.post, comments, token: ana.token, json: ["text": "still me"])
            #expect(own.status == .created)
            // The post mentions no one: `mentioned` lets no one else in.
            _ = try await api.call(.patch, "/v1/posts/\(post)", token: ana.token, json: ["replies": "mentioned"])
            #expect(try await api.call(.post, comments, token: bo.token, json: ["text": "?"]).status == .forbidden)

            let opened = try await api.call(
                .patch, "/v1/posts/\(post)", token: ana.token, json: ["replies": "everyone"])
            #expect(opened.object["replies"] as? String == "everyone")
            #expect(try await api.call(.post, comments, token: cy.token, json: ["text": "in"]).status == .created)
            let read = try await api.call(.get, "/v1/posts/\(post)", token: cy.token)
            #expect(read.object["replies"] as? String == "everyone" && read.object["comments"] as? Int == 4)
        }
    }

    @Test("replies defaults to everyone; an unknown value, or another's post, is refused and appends nothing")
    func refusals() async throws {
        try await withAPI { api in
            let ana = try await api.register("Ana")
            let bo = try await api.register("Bo")
            let plain = try await api.call(.post, "/v1/posts", token: ana.token, json: ["text": "open"])
            #expect(plain.object["replies"] as? String == "everyone")
            let post = try #require(plain.object["id"] as? String)
            let head = api.head
            for (method, path, body, code) in [
                (HTTPRequest.Method.post, "/v1/posts", ["text": "x", "replies": "friends"], "invalid_field"),
                (.patch, "/v1/posts/\(post)", ["replies": "some"], "invalid_field"),
                (.patch, "/v1/posts/\(post)", ["replies": 3] as [String: Any], "bad_request"),
            ] {
                let answer = try await api.call(method, path, token: ana.token, json: body)
                #expect(answer.errorCode == code, "\(path) \(body): \(answer.object)")
            }
            let others = try await api.call(.patch, "/v1/posts/\(post)", token: bo.token, json: ["replies": "nobody"])
            #expect(others.status == .forbidden && others.errorCode == "forbidden")
            #expect(api.head == head)
        }
    }
}
