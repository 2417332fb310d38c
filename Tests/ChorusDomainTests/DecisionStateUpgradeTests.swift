import ChorusDomain
import ChorusLog
import ChorusTestSupport
import Testing

@Suite("Decision state format")
struct DecisionStateUpgradeTests {
    @Test("a state an older Chorus wrote is recomputed before the next decision, and old comments can be deleted")
    func upgradesOldState() async throws {
        try await withExecutor { chorus, _ in
            let ana = try await chorus.register("Ana")
            let bo = try await chorus.register("Bo")
            let post = PostID(try await chorus.execute(.createPost(author: ana, text: "from before")).createdID!)!
            let comment = CommentID(
                try await chorus.execute(.addComment(author: bo, post: post, text: "old comment")).createdID!)!
            _ = try await chorus.execute(.createPost(author: bo, repostOf: post))
            _ = try await chorus.execute(.follow(follower: bo, followee: ana))
            #expect(
                try DecisionStateUpgrade(log: chorus.log, keys: TestDataKeys.shared).storedFormat()
                    == DecisionStateUpgrade.currentFormat)

            // Format 1, as the first Chorus left it: no format, posts by author alone, follows without their
            // position, no comments or reposts kept.
            try await chorus.log.append(.durable, eventCount: 0) { batch in
                try Self.rewriteAsFormatOne(batch.state)
            }
            let upgrade = DecisionStateUpgrade(log: chorus.log, keys: TestDataKeys.shared)
            #expect(try upgrade.storedFormat() == 1)
            var audit = DecisionStateAudit(log: chorus.log, keys: TestDataKeys.shared)
            #expect(try audit.run().olderFormat == 1, "verify does not compare an old format")

            // A new executor on the same log: its first command recomputes the state first.
            let later = CommandExecutor(
                log: chorus.log, keys: TestDataKeys.shared, media: TestMediaCatalog(),
                passwordHasher: PasswordHasher(cost: 4))
            let deleted = try await later.execute(.deleteComment(user: bo, post: post, comment: comment))
            #expect(deleted.appended)
            #expect(try upgrade.storedFormat() == DecisionStateUpgrade.currentFormat)
            let deletion = try await later.execute(.deletePost(author: ana, post: post))
            #expect(try later.events().suffix(2).map(\.typeName) == ["PostDeleted", "PostDeleted"], "with its repost")
            #expect(deletion.appended)
            var again = DecisionStateAudit(log: chorus.log, keys: TestDataKeys.shared)
            let report = try again.run()
            #expect(report.olderFormat == nil && report.mismatch == nil && report.entries > 0)
        }
    }

    @Test("a new log is stamped with the current format by its first write, so it is never taken for an old one")
    func newLogIsCurrent() async throws {
        try await withExecutor { chorus, _ in
            _ = try await chorus.register("Ana")
            #expect(
                try DecisionStateUpgrade(log: chorus.log, keys: TestDataKeys.shared).storedFormat()
                    == DecisionStateUpgrade.currentFormat)
            #expect(try await DecisionStateUpgrade(log: chorus.log, keys: TestDataKeys.shared).run() == false)
        }
    }

    /// Rewrites the state in format 1.
    private static func rewriteAsFormatOne(_ state: any StateWriter) throws {
        _ = try state.delete(Array("version".utf8), in: StateTable("format"))
        for name in ["comments", "reposts"] {
            for key in try keys(of: StateTable(name), in: state) { _ = try state.delete(key, in: StateTable(name)) }
        }
        let posts = StateTable("posts")
        for key in try keys(of: posts, in: state) {
            // The author: the first field of today's value (a 4-byte length, then the id's 26 bytes).
            guard let value = try state.value(for: key, in: posts) else { continue }
            try state.put(Array(value[4..<30]), for: key, in: posts)
        }
        let follows = StateTable("follows")
        for key in try keys(of: follows, in: state) { try state.put([], for: key, in: follows) }
    }

    private static func keys(of table: StateTable, in state: any StateWriter) throws -> [[UInt8]] {
        var keys: [[UInt8]] = []
        try state.forEach(in: table) { key, _ in
            keys.append(Array(key))
            return true
        }
        return keys
    }
}
