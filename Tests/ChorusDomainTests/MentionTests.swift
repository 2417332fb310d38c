import ChorusDomain
import ChorusLog
import Testing

@Suite("Mentions: which handles a text names, and whom they are resolved to")
struct MentionTests {
    @Test("a handle after a space or punctuation, in any case, once each; not in addresses, paths or remote handles")
    func handles() {
        #expect(Mentions.handles(in: "@Ana hi (@bo_1), @ana again.") == ["ana", "bo_1"])
        #expect(Mentions.handles(in: "mail ana@example.com or see example.com/@ana or @ana@elsewhere.social") == [])
        #expect(Mentions.handles(in: "@ab is short; @\(String(repeating: "x", count: 31)) is long") == [])
        #expect(Mentions.handles(in: "안녕 @서울 @bob님 반가워요") == ["bob"], "a Korean honorific after a handle ends it")
        #expect(Mentions.handles(in: "no at sign here") == [])
    }

    @Test(
        "a post's mentions are the accounts that have its handles when it is written, but none blocked either way, and at most 20 a text"
    )
    func resolution() async throws {
        try await withExecutor { executor, _ in
            let ana = try await executor.register("Ana")
            let bo = try await executor.register("Bob")
            let cy = try await executor.register("Cyd")
            _ = try await executor.execute(.block(blocker: cy, blocked: ana))
            var many = "@ana @bob @cyd"
            for index in 0..<25 {
                let user = try await executor.register("Many\(index)")
                _ = try await executor.execute(.editProfile(user: user, handle: "many_\(index)"))
                many += " @many_\(index)"
            }
            _ = try await executor.execute(.createPost(author: ana, caption: nil, text: many, media: [], repostOf: nil))
            guard case .postCreated(let created)? = try executor.events().last else {
                Issue.record("no post")
                return
            }
            #expect(created.mentions.text.prefix(2) == [ana, bo], "oneself too; never across a block")
            #expect(created.mentions.text.count == Mentions.maximum)
            #expect(!created.mentions.text.contains(cy))
        }
    }
}
