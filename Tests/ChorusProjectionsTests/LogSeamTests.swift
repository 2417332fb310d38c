import ChorusDomain
import ChorusLog
import ChorusProjections
import ChorusTestSupport
import Synchronization
import Testing

/// The domain and the read models use the log through `EventLog` alone: on a second implementation of it, in memory
/// and nothing like LMDB, they decide, refuse, replay and project exactly as they do on the embedded log.
@Suite("The log seam")
struct LogSeamTests {
    @Test("commands decide and refuse, and every read model builds and follows, on another implementation of the log")
    func anotherLog() async throws {
        try await withTemporaryDirectory { directory in
            let log = InMemoryEventLog()
            let chorus = CommandExecutor(
                log: log, keys: TestDataKeys.shared, media: TestMediaCatalog(), passwordHasher: PasswordHasher(cost: 4))
            func register(_ name: String) async throws -> UserID {
                let result = try await chorus.execute(
                    .registerUser(email: "\(name.lowercased())@example.com", password: "secret1", name: name))
                return UserID(try #require(result.createdID))!
            }
            let ana = try await register("Ana")
            let bo = try await register("Bo")
            let first = PostID(
                try #require(try await chorus.execute(.createPost(author: ana, text: "first")).createdID))!

            // Decisions against the state the seam keeps: a taken e-mail, a repeated like, an idempotent retry.
            let taken = await domainErrorCode { _ = try await register("Ana") }
            #expect(taken == .emailTaken)
            let liked = try await chorus.execute(.like(user: bo, post: first))
            #expect(try await chorus.execute(.like(user: bo, post: first)).appended == false)
            let commented = try await chorus.execute(
                .addComment(author: bo, post: first, text: "hi"), idempotencyKey: "c1")
            let retried = try await chorus.execute(
                .addComment(author: bo, post: first, text: "hi"), idempotencyKey: "c1")
            #expect(retried.position == commented.position && retried.createdID == commented.createdID)
            #expect(log.head == commented.position, "the retry appended nothing")

            // Built from the log, then following it live.
            let engine = try ProjectionEngine(
                log: log, keys: TestDataKeys.shared, directory: directory + "/projections")
            defer { engine.close() }
            try engine.catchUp()
            let second = try await whileFollowing(engine) {
                _ = try await chorus.execute(.follow(follower: bo, followee: ana))
                let second = try await chorus.execute(.createPost(author: ana, text: "second"))
                try await engine.waitUntilApplied(second.position, timeout: readModelsWait)
                return second
            }

            let snapshot = try engine.snapshot { view in
                (
                    feed: try view.followingFeed(of: bo, page: PageRequest()).items.map(\.text),
                    post: try view.post(first, viewer: bo),
                    ana: try view.profile(ana, viewer: bo),
                    notifications: try view.notifications(of: ana, page: PageRequest()).items.map(\.kind),
                    comments: try view.comments(on: first, page: PageRequest())?.items.map(\.text)
                )
            }
            #expect(snapshot.position == second.position)
            #expect(
                snapshot.answer.feed == ["second", "first"], "a follow back-filled the feed, and a post fanned out")
            #expect(snapshot.answer.post?.likes == 1 && snapshot.answer.post?.hasLiked == true && liked.appended)
            #expect(snapshot.answer.ana?.followers == 1 && snapshot.answer.ana?.posts == 2)
            #expect(snapshot.answer.notifications == [.follow, .comment, .like])
            #expect(snapshot.answer.comments == ["hi"])

            // A rebuild from this log equals the read models built and followed live, byte for byte.
            let rebuilt = directory + "/rebuilt"
            _ = try ProjectionEngine.rebuild(log: log, keys: TestDataKeys.shared, into: rebuilt)
            #expect(try dumpReadModels(engine.store) == dumpReadModels(atDirectory: rebuilt))
        }
    }
}
