import ChorusDomain
import ChorusLog
import ChorusTestSupport
import Testing

@Suite("Importing recorded events")
struct RecordedEventImporterTests {
    @Test("a batch's changes written in key order leave the state its events fold to: the last change to a key wins")
    func sortedChangesKeepTheirOrder() async throws {
        try await withExecutor { chorus, _ in
            let ana = try await chorus.register("Ana")
            let bo = try await chorus.register("Bo")
            let post = PostID(try await chorus.execute(.createPost(author: ana, text: "hello")).createdID!)!
            // The same keys changed again and again within one batch, put and removed in turn.
            for _ in 0..<3 {
                _ = try await chorus.execute(.like(user: bo, post: post))
                _ = try await chorus.execute(.unlike(user: bo, post: post))
                _ = try await chorus.execute(.follow(follower: bo, followee: ana))
                _ = try await chorus.execute(.unfollow(follower: bo, followee: ana))
            }
            _ = try await chorus.execute(.like(user: bo, post: post))
            _ = try await chorus.execute(.follow(follower: ana, followee: bo))
            let cleo = try await chorus.register("Cleo")
            // A batch of its own with an account's deletion, whose changes go in as they came.
            let beforeDeletion = chorus.log.head
            _ = try await chorus.execute(.follow(follower: cleo, followee: ana))
            _ = try await chorus.execute(.deleteAccount(user: cleo, password: "secret-password"))
            let recorded = try chorus.log.read(from: 1, limit: 10_000)

            try await withDecisionLog { log in
                let importer = RecordedEventImporter(log: log, keys: TestDataKeys.shared)
                let first = recorded.filter { $0.position <= beforeDeletion }
                try await importer.append(importer.decode(first))
                try await importer.append(importer.decode(recorded.filter { $0.position > beforeDeletion }))
                #expect(log.head == chorus.log.head)

                var audit = DecisionStateAudit(log: log, keys: TestDataKeys.shared)
                let report = try audit.run()
                #expect(report.mismatch == nil, "\(String(describing: report.mismatch))")
                #expect(report.entries > 0)
                // Bo likes the post, as the last like left it; Bo follows Ana no more.
                try log.readState { state in
                    let liked = try state.value(
                        for: Array("\(bo.rawValue)\u{0}\(post.rawValue)".utf8), in: StateTable("likes"))
                    #expect(liked != nil)
                    let follows = try state.value(
                        for: Array("\(bo.rawValue)\u{0}\(ana.rawValue)".utf8), in: StateTable("follows"))
                    #expect(follows == nil)
                }
            }
        }
    }
}
