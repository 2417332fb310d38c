import ChorusTestSupport
import Foundation
import Testing

@Suite("Event schema evolution")
struct SchemaEvolutionTests {
    /// Written by Chorus before likes, unlikes, comments and unfollows carried their post's author and their edge's
    /// position (schema version 1 of those events), and exported then; never rewritten.
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/schema-version-1.jsonl").path

    @Test("a log written with version 1 of four events imports, verifies, replays, projects and serves today")
    func versionOneLog() async throws {
        try await withTemporaryDirectory { root in
            let data = root + "/data"
            let imported = try await runChorus(["log", "import", "--data", data, Self.fixture, "--json"])
            try #require(imported.status == 0, "\(imported.standardError)")
            #expect(try lastJSONLine(imported.standardOutput)["imported"] as? Int == 15)
            let verify = try await runChorus(["log", "verify", "--data", data])
            #expect(verify.status == 0, "\(verify.standardOutput)")
            // Exported again, the same bytes as the export an older Chorus wrote (with JSONEncoder).
            let exported = try await runChorus(["log", "export", "--data", data])
            #expect(exported.standardOutput == (try String(contentsOfFile: Self.fixture, encoding: .utf8)))

            // Replayed: the old shape is read into today's, its new fields empty.
            let replay = try await runChorus([
                "replay", "--data", data, "--json", "--type", "Liked", "--type", "Unliked",
            ])
            let old = try replay.standardOutput.split(separator: "\n").map { try lastJSONLine(String($0)) }
            #expect(old.count == 4)
            #expect(old.allSatisfy { $0["schemaVersion"] as? Int == 1 })
            #expect(old.allSatisfy { ($0["data"] as? [String: Any])?["postAuthor"] is NSNull })

            // Projected: the read models are what today's events would have made.
            let rebuild = try await runChorus(["projections", "rebuild", "--data", data, "--json"])
            #expect(try lastJSONLine(rebuild.standardOutput)["position"] as? Int == 15)
            let server = try await ServerProcess(data: data)
            func logIn(_ email: String) async throws -> (id: String, token: String) {
                let answer = try await server.call(
                    "POST", "/v1/auth/login", json: ["email": email, "password": "password1"])
                let token = try #require(answer.json["token"] as? String, "\(answer.json)")
                return (try #require((answer.json["user"] as? [String: Any])?["id"] as? String), token)
            }
            let ana = try await logIn("ana@example.com")
            let bo = try await logIn("bo@example.com")
            let cy = try await logIn("cy@example.com")
            let notifications = try await server.call("GET", "/v1/notifications", token: ana.token)
            #expect(notifications.items.map { $0["type"] as? String } == ["follow", "comment", "like"])
            #expect(notifications.items.allSatisfy { ($0["actor"] as? [String: Any])?["id"] as? String == bo.id })
            let followers = try await server.call("GET", "/v1/users/\(ana.id)/followers", token: ana.token)
            #expect(followers.items.map { $0["id"] as? String } == [bo.id])
            let posts = try await server.call("GET", "/v1/users/\(ana.id)/posts", token: cy.token)
            let post = try #require(posts.items.first)
            #expect(post["text"] as? String == "hello from 2025")
            #expect(post["likes"] as? Int == 2)
            #expect(post["comments"] as? Int == 1)
            #expect(post["hasLiked"] as? Bool == false)

            // And the log goes on in today's shape beside the old one.
            let postID = try #require(post["id"] as? String)
            #expect(try await server.call("PUT", "/v1/posts/\(postID)/like", token: cy.token).status == 200)
            #expect(await server.stop() == 0)
            let latest = try await runChorus(["replay", "--data", data, "--json", "--type", "Liked", "--from", "16"])
            let like = try lastJSONLine(latest.standardOutput)
            #expect(like["schemaVersion"] as? Int == 2)
            #expect((like["data"] as? [String: Any])?["postAuthor"] as? String == ana.id)
            #expect(try await runChorus(["log", "verify", "--data", data]).status == 0)
        }
    }
}
