import ChorusDemo
import ChorusDomain
import ChorusLog
import ChorusProjections
import ChorusTestSupport
import Testing

/// Hybrid fan-out: posts of authors with many followers are merged into the Following feeds when read instead of
/// written into each. Whatever the limit, every page of every feed reads as if everything had been fanned out.
@Suite("Hybrid fan-out")
struct HybridFanOutTests {
    @Test("authors crossing the limit both ways: every feed page equals the fully fanned-out one, and a rebuild equals")
    func crossingBothWays() async throws {
        try await withProjections(batchSize: 1) { app in
            let ana = try await app.register("Ana")
            let (bo, cy, dee) = (
                try await app.register("Bo"), try await app.register("Cy"), try await app.register("Dee")
            )
            func run(_ command: Command) async throws { _ = try await app.chorus.execute(command) }

            // Limit 2. Ana's first post goes to Bo; then she has two followers and her posts are held back.
            try await run(.follow(follower: bo, followee: ana))
            _ = try await app.post(ana, "fanned out to Bo")
            try await run(.follow(follower: cy, followee: ana))
            let held = try await app.post(ana, "held back")
            // Cy follows Bo, whose repost of a held-back post is fanned out (Bo has one follower).
            try await run(.follow(follower: cy, followee: bo))
            try await run(.repost(user: bo, post: held))
            // Ana falls below the limit, posts (fanned out), and crosses it again (held back).
            try await run(.unfollow(follower: cy, followee: ana))
            _ = try await app.post(ana, "below the limit again")
            try await run(.follow(follower: dee, followee: ana))
            let again = try await app.post(ana, "held back again")
            // A follow back-fills what was fanned out and merges what was held back; a held-back post deleted while
            // another is left.
            try await run(.follow(follower: cy, followee: ana))
            _ = try await app.post(bo, "Bo's own")
            try await run(.deletePost(author: ana, post: again))
            try await run(.unfollow(follower: dee, followee: ana))
            let last = try await app.post(ana, "held back once more")
            try await run(.repost(user: dee, post: last))
            try await run(.follow(follower: dee, followee: ana))
            try await run(.deletePost(author: ana, post: held))
            let middle = app.log.head
            // Her last held-back post deleted: no feed merges hers any more.
            try await run(.deletePost(author: ana, post: last))

            let limitedEngine = try ProjectionEngine(
                log: app.log, keys: TestDataKeys.shared, directory: app.directory + "/limited", batchSize: 1,
                fanOutLimit: 2)
            defer { limitedEngine.close() }
            // The first batch into an empty store is a build: one event, then the rest one at a time.
            try limitedEngine.catchUp(through: LogPosition(1))
            for (through, heldBack, ownFeed) in [
                (middle, 1, ["held back once more", "below the limit again", "fanned out to Bo"]),
                (app.log.head, 0, ["below the limit again", "fanned out to Bo"]),
            ] {
                try limitedEngine.catchUp(through: through)
                let followed = try dumpReadModels(limitedEngine.store)
                #expect(followed["held-back-posts"]?.count == heldBack)
                // Ana and her three followers merge her held-back post; none once it is gone.
                #expect(followed["feed-merges"]?.count == heldBack * 4)

                // A rebuild with the same limit equals the store followed event by event, byte for byte.
                let rebuilt = app.directory + "/rebuilt-\(through)"
                _ = try ProjectionEngine.rebuild(
                    log: app.log, keys: TestDataKeys.shared, into: rebuilt, through: through, fanOutLimit: 2)
                let derived = try dumpReadModels(atDirectory: rebuilt)
                for name in ProjectionEngine.tables.map(\.name) {
                    #expect(followed[name] == derived[name], "table \(name) differs")
                }

                let unlimited = app.directory + "/unlimited-\(through)"
                _ = try ProjectionEngine.rebuild(
                    log: app.log, keys: TestDataKeys.shared, into: unlimited, through: through, fanOutLimit: Int.max,
                    fanOutPostLimit: Int.max)
                let reference = try ProjectionEngine(log: app.log, keys: TestDataKeys.shared, directory: unlimited)
                defer { reference.close() }
                #expect(try dumpReadModels(reference.store)["held-back-posts"]?.isEmpty == true)
                for user in [ana, bo, cy, dee] {
                    for limit in [1, 2, 20] {
                        let hybrid = try allPages(of: user, limit: limit, in: limitedEngine)
                        #expect(hybrid == (try allPages(of: user, limit: limit, in: reference)), "feed of \(user)")
                    }
                }
                let anas = try allPages(of: ana, limit: 20, in: limitedEngine).flatMap { $0.items.map(\.text) }
                #expect(anas == ownFeed)
            }
        }
    }

    @Test("on a demo history, with limits that many authors cross, every feed reads as fully fanned out")
    func demoHistory() async throws {
        try await withProjections { app in
            _ = try await DemoWorkload(seed: 19, events: 3_000).run(on: app.chorus)
            let users = try app.log.read(from: 1, limit: 1_000_000).compactMap { record -> UserID? in
                guard case .userRegistered(let event) = try DomainEvent(decoding: record, keys: TestDataKeys.shared)
                else { return nil }
                return event.user
            }
            let reference = try ProjectionEngine(
                log: app.log, keys: TestDataKeys.shared, directory: app.directory + "/reference", fanOutLimit: Int.max,
                fanOutPostLimit: Int.max)
            defer { reference.close() }
            try reference.catchUp()
            // Followers limits that many authors cross, and a posts limit that the busiest posters pass.
            for (limit, postLimit) in [(3, Int.max), (8, Int.max), (Int.max, 6)] {
                let engine = try ProjectionEngine(
                    log: app.log, keys: TestDataKeys.shared, directory: app.directory + "/limit-\(limit)-\(postLimit)",
                    batchSize: 16, fanOutLimit: limit, fanOutPostLimit: postLimit)
                defer { engine.close() }
                try engine.catchUp(through: LogPosition(1))
                try engine.catchUp()
                let tables = try dumpReadModels(engine.store)
                #expect((tables["held-back-posts"]?.count ?? 0) > 20, "limits \(limit), \(postLimit) hold posts back")
                #expect((tables["feed-merges"]?.count ?? 0) > 20, "and feeds merge them")
                #expect(
                    (tables["held-back-posts"]?.count ?? 0) + (tables["fanned-out-posts"]?.count ?? 0)
                        == tables["user-posts"]?.count, "every post and repost held back or fanned out, once")
                for user in users {
                    #expect(
                        try allPages(of: user, limit: 9, in: engine) == allPages(of: user, limit: 9, in: reference),
                        "feed of \(user), limits \(limit), \(postLimit)")
                }
                let rebuilt = app.directory + "/rebuilt-\(limit)-\(postLimit)"
                _ = try ProjectionEngine.rebuild(
                    log: app.log, keys: TestDataKeys.shared, into: rebuilt, fanOutLimit: limit,
                    fanOutPostLimit: postLimit)
                let rebuiltTables = try dumpReadModels(atDirectory: rebuilt)
                for name in ProjectionEngine.tables.map(\.name) {
                    #expect(
                        rebuiltTables[name] == tables[name], "table \(name) rebuilt with limits \(limit), \(postLimit)")
                }
            }
        }
    }

    @Test("past the posts limit a follow back-fills only the posts fanned out, and an unfollow takes only those out")
    func prolificAuthor() async throws {
        try await withProjections(batchSize: 1) { app in
            let (ana, bo) = (try await app.register("Ana"), try await app.register("Bo"))
            for index in 0..<7 { _ = try await app.post(ana, "before \(index)") }
            _ = try await app.chorus.execute(.follow(follower: bo, followee: ana))
            _ = try await app.post(ana, "after")
            _ = try await app.post(bo, "Bo's own")

            let engine = try ProjectionEngine(
                log: app.log, keys: TestDataKeys.shared, directory: app.directory + "/limited", batchSize: 1,
                fanOutPostLimit: 3)
            defer { engine.close() }
            try engine.catchUp(through: LogPosition(1))
            try engine.catchUp()
            var tables = try dumpReadModels(engine.store)
            // Ana's first three posts were fanned out; the other five are held back and merged.
            #expect(tables["held-back-posts"]?.count == 5)
            #expect(tables["fanned-out-posts"]?.count == 4, "Ana's first three and Bo's own")
            #expect(tables["feed-merges"]?.count == 2, "Ana's own feed and Bo's")
            // Feeds: Ana's three in hers; those three and Bo's own in his.
            #expect(try ProjectionEngine.feedEntryCount(in: engine.store) == 7)
            let bos = try engine.snapshot { try $0.followingFeed(of: bo, page: PageRequest(limit: 20)) }.answer
            #expect(bos.items.map(\.text) == ["Bo's own", "after"] + (0..<7).reversed().map { "before \($0)" })

            _ = try await app.chorus.execute(.unfollow(follower: bo, followee: ana))
            try engine.catchUp()
            tables = try dumpReadModels(engine.store)
            #expect(tables["feed-merges"]?.count == 1, "Ana's own feed only")
            #expect(try ProjectionEngine.feedEntryCount(in: engine.store) == 4)
            let alone = try engine.snapshot { try $0.followingFeed(of: bo, page: PageRequest(limit: 20)) }.answer
            #expect(alone.items.map(\.text) == ["Bo's own"])

            let rebuilt = app.directory + "/rebuilt"
            _ = try ProjectionEngine.rebuild(
                log: app.log, keys: TestDataKeys.shared, into: rebuilt, fanOutPostLimit: 3)
            #expect(try dumpReadModels(atDirectory: rebuilt) == tables)
        }
    }

    /// Every page of `user`'s Following feed, `limit` posts at a time, following the cursors.
    private func allPages(of user: UserID, limit: Int, in engine: ProjectionEngine) throws -> [Page<Post>] {
        var pages: [Page<Post>] = []
        var cursor: PageCursor?
        repeat {
            let request = PageRequest(limit: limit, cursor: cursor)
            let page = try engine.snapshot { try $0.followingFeed(of: user, page: request) }.answer
            pages.append(page)
            cursor = page.nextCursor
        } while cursor != nil && pages.count < 1_000
        return pages
    }
}
