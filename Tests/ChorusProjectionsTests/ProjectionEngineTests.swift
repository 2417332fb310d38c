import ChorusDemo
import ChorusDomain
import ChorusLMDBLog
import ChorusLog
import ChorusProjections
import ChorusStorage
import ChorusTestSupport
import Testing

@Suite("Projection engine")
struct ProjectionEngineTests {
    @Test("a rebuild from the log equals the read models built live, table by table, key by key, byte for byte")
    func rebuildEqualsLive() async throws {
        try await withProjections(batchSize: 7) { app in
            let summary = try await whileFollowing(app.engine) {
                let media = app.media
                let summary = try await DemoWorkload(seed: 11, events: 1_500) { user, _ in media.add(uploadedBy: user) }
                    .run(on: app.chorus)
                #expect(summary.events >= 1_500 && summary.posts > 100)
                var types: [String: Int] = [:]
                var (severalImages, altEdits) = (0, 0)
                try app.log.scan { event in
                    types[event.type, default: 0] += 1
                    switch try DomainEvent(decoding: event, keys: TestDataKeys.shared) {
                    case .postCreated(let post) where post.media.count > 1: severalImages += 1
                    case .postEdited(let edit) where edit.alts != nil: altEdits += 1
                    default: break
                    }
                }
                #expect(severalImages > 5 && altEdits > 0, "posts with several images, and alt edits")
                #expect(types["PostDeleted", default: 0] > 5, "a history that deletes posts: \(types)")
                #expect(types["CommentDeleted", default: 0] > 0, "and comments: \(types)")
                #expect(types["PostEdited", default: 0] > 5)
                #expect(types["Blocked", default: 0] > 0 && types["Muted", default: 0] > 0, "and blocks: \(types)")
                try await app.engine.waitUntilApplied(app.log.head, timeout: .seconds(30))
                return summary
            }

            let rebuilt = app.directory + "/rebuilt"
            let position = try ProjectionEngine.rebuild(log: app.log, keys: TestDataKeys.shared, into: rebuilt)
            #expect(position == app.log.head)
            let liveTables = try dumpReadModels(app.engine.store)
            let rebuiltTables = try dumpReadModels(atDirectory: rebuilt)
            for name in ProjectionEngine.tables.map(\.name) {
                #expect(liveTables[name] == rebuiltTables[name], "table \(name) differs")
            }
            #expect(try ProjectionEngine.feedEntryCount(in: app.engine.store) > summary.posts, "feeds fanned out")
        }
    }

    @Test("time travel: the read models rebuilt up to a position equal those caught up one event at a time to it")
    func timeTravel() async throws {
        try await withProjections(batchSize: 1) { app in
            _ = try await DemoWorkload(seed: 5, events: 400).run(on: app.chorus)
            let middle = LogPosition(app.log.head.rawValue / 2)
            let past = app.directory + "/past"
            #expect(
                try ProjectionEngine.rebuild(log: app.log, keys: TestDataKeys.shared, into: past, through: middle)
                    == middle)
            // The first batch into an empty store is a build; one event, so that the rest are followed one by one.
            #expect(try app.engine.catchUp(through: LogPosition(1)) == 1)
            #expect(try app.engine.catchUp(through: middle) == Int(middle.rawValue) - 1)
            #expect(app.engine.position == middle)
            let pastTables = try dumpReadModels(atDirectory: past)
            #expect(try dumpReadModels(app.engine.store) == pastTables)

            // Reopened read models resume from their checkpoint: nothing is applied twice.
            app.engine.close()
            let reopened = try ProjectionEngine(
                log: app.log, keys: TestDataKeys.shared, directory: app.directory + "/projections")
            defer { reopened.close() }
            #expect(reopened.position == middle)
            try reopened.catchUp()
            let full = app.directory + "/full"
            _ = try ProjectionEngine.rebuild(log: app.log, keys: TestDataKeys.shared, into: full)
            #expect(try dumpReadModels(reopened.store) == dumpReadModels(atDirectory: full))
        }
    }

    @Test(
        "derived read models (counters, feeds, search) built at the end of a rebuild equal those followed event by event"
    )
    func derivedEqualFollowed() async throws {
        try await withProjections(batchSize: 1) { app in
            let ana = try await app.register("Ana")
            try app.engine.catchUp()
            let bo = try await app.register("Bo")
            let cy = try await app.register("Cy")
            let dee = try await app.register("Dee")
            let anas = try await app.post(ana, "one")
            let bos = try await app.post(bo, "two")
            // A like taken back leaves no counters row; a like of one's own post notifies no one.
            _ = try await app.chorus.execute(.like(user: bo, post: anas))
            _ = try await app.chorus.execute(.unlike(user: bo, post: anas))
            _ = try await app.chorus.execute(.like(user: bo, post: bos))
            _ = try await app.chorus.execute(.unlike(user: bo, post: bos))
            _ = try await app.chorus.execute(.like(user: cy, post: bos))
            // A follow taken back and made again; comments count and notify.
            _ = try await app.chorus.execute(.follow(follower: cy, followee: ana))
            _ = try await app.chorus.execute(.unfollow(follower: cy, followee: ana))
            _ = try await app.chorus.execute(.follow(follower: bo, followee: ana))
            _ = try await app.chorus.execute(.follow(follower: cy, followee: ana))
            _ = try await app.chorus.execute(.addComment(author: cy, post: anas, text: "hi"))
            let three = try await app.post(ana, "three")
            _ = try await app.chorus.execute(.unfollow(follower: bo, followee: ana))
            // Counters that go back to zero: Dee's and Ana's third post's.
            _ = try await app.chorus.execute(.follow(follower: dee, followee: bo))
            _ = try await app.chorus.execute(.unfollow(follower: dee, followee: bo))
            _ = try await app.chorus.execute(.like(user: bo, post: three))
            _ = try await app.chorus.execute(.unlike(user: bo, post: three))
            // Bookmarks loaded in key order by the build, one taken back in between.
            // Muted words, one taken back.
            let muted = try await app.chorus.execute(.muteWord(user: bo, word: "spoiler"))
            _ = try await app.chorus.execute(.muteWord(user: cy, word: "서울", scope: .notFollowing))
            _ = try await app.chorus.execute(.unmuteWord(user: bo, id: MutedWordID(muted.createdID!)!))
            _ = try await app.chorus.execute(.muteWord(user: bo, word: "finale"))
            _ = try await app.chorus.execute(.bookmark(user: bo, post: anas))
            _ = try await app.chorus.execute(.bookmark(user: cy, post: bos))
            _ = try await app.chorus.execute(.unbookmark(user: bo, post: anas))
            _ = try await app.chorus.execute(.bookmark(user: bo, post: three))
            _ = try await app.chorus.execute(.bookmark(user: bo, post: anas))
            // A renamed user is searched by the new name.
            _ = try await app.chorus.execute(.editProfile(user: cy, name: "최유진", bio: "hi"))
            try app.engine.catchUp()

            let rebuilt = app.directory + "/rebuilt"
            #expect(
                try ProjectionEngine.rebuild(log: app.log, keys: TestDataKeys.shared, into: rebuilt) == app.log.head)
            let followed = try dumpReadModels(app.engine.store)
            let derived = try dumpReadModels(atDirectory: rebuilt)
            for name in ProjectionEngine.tables.map(\.name) {
                #expect(followed[name] == derived[name], "table \(name) differs")
            }
            // Counters rows: Ana (followers 1, posts 2), Bo (posts 1), Cy (following 1); Ana's first post (1 comment)
            // and Bo's (1 like); none for Dee or Ana's third post, whose counts went back to zero.
            #expect(followed["profile-counters"]?.count == 3)
            #expect(followed["post-counters"]?.count == 2)
            // Feeds: Ana's two posts in hers and Cy's; Bo's own post in his.
            #expect(try ProjectionEngine.feedEntryCount(in: app.engine.store) == 5)
            let post = try app.read { try $0.post(anas, viewer: ana) }
            #expect(post?.likes == 0 && post?.comments == 1)
        }
    }

    @Test("feeds longer than a chunk: back-fills into the middle, unfollows across chunks, pages newest first")
    func longFeeds() async throws {
        try await withProjections(batchSize: 1) { app in
            let ana = try await app.register("Ana")
            try app.engine.catchUp()
            let bo = try await app.register("Bo")
            let cy = try await app.register("Cy")
            // Each post with its position: a feed is in log order.
            func post(_ author: UserID, _ text: String) async throws -> (LogPosition, PostID) {
                let result = try await app.chorus.execute(.createPost(author: author, text: text))
                return (result.position, PostID(try #require(result.createdID))!)
            }
            var anas: [(LogPosition, PostID)] = []
            var cys: [(LogPosition, PostID)] = []
            var bos: [(LogPosition, PostID)] = []
            for index in 0..<300 {
                anas.append(try await post(ana, "ana \(index)"))
                if index % 2 == 0 { cys.append(try await post(cy, "cy \(index)")) }
            }
            _ = try await app.chorus.execute(.follow(follower: bo, followee: ana))
            for index in 0..<40 { bos.append(try await post(bo, "bo \(index)")) }
            _ = try await app.chorus.execute(.follow(follower: bo, followee: cy))
            _ = try await app.chorus.execute(.unfollow(follower: bo, followee: ana))
            try app.engine.catchUp()

            // Bo's feed: Bo's and Cy's posts, newest first, read a page at a time.
            func feed(of user: UserID) throws -> [PostID] {
                var ids: [PostID] = []
                var request = PageRequest(limit: 100)
                while true {
                    let page = try app.read { try $0.followingFeed(of: user, page: request) }
                    ids += page.items.map(\.id)
                    guard let next = page.nextCursor else { return ids }
                    request = PageRequest(limit: 100, cursor: next)
                }
            }
            func newestFirst(_ posts: [(LogPosition, PostID)]) -> [PostID] { posts.sorted { $0.0 > $1.0 }.map(\.1) }
            #expect(try feed(of: bo) == newestFirst(cys + bos))
            _ = try await app.chorus.execute(.follow(follower: bo, followee: ana))
            try app.engine.catchUp()
            #expect(try feed(of: bo) == newestFirst(anas + cys + bos))

            let rebuilt = app.directory + "/rebuilt"
            _ = try ProjectionEngine.rebuild(log: app.log, keys: TestDataKeys.shared, into: rebuilt)
            #expect(try dumpReadModels(app.engine.store) == dumpReadModels(atDirectory: rebuilt))
            // Ana's own 300, Cy's own 150, and Bo's 490.
            #expect(try ProjectionEngine.feedEntryCount(in: app.engine.store) == 300 + 150 + 490)
        }
    }

    @Test("a running engine applies a new log's first events as any batch, stores its layout, and reopens as a rebuild")
    func firstEventsOfANewLog() async throws {
        try await withProjections { app in
            try await whileFollowing(app.engine) {
                let ana = try await app.register("Ana")
                _ = try await app.post(ana, "first")
                try await app.engine.waitUntilApplied(app.log.head, timeout: readModelsWait)
            }
            app.engine.close()

            // A store with no layout recorded would be refused here as an old one.
            let reopened = try ProjectionEngine(
                log: app.log, keys: TestDataKeys.shared, directory: app.directory + "/projections")
            defer { reopened.close() }
            #expect(reopened.position == app.log.head)
            let rebuilt = app.directory + "/rebuilt"
            _ = try ProjectionEngine.rebuild(log: app.log, keys: TestDataKeys.shared, into: rebuilt)
            #expect(try dumpReadModels(reopened.store) == dumpReadModels(atDirectory: rebuilt))
        }
    }

    @Test("read models of another layout are refused until rebuilt")
    func layoutChanged() async throws {
        try await withProjections { app in
            _ = try await app.register("Ana")
            try app.engine.catchUp()
            let directory = app.engine.store.directory
            app.engine.close()
            // What a store from before layouts holds: a checkpoint and no layout.
            let store = try KeyValueStore(directory: directory, tables: ProjectionEngine.tables)
            _ = try store.write { try $0.delete(Array("layout".utf8), in: store.table("checkpoint")) }
            store.close()
            #expect {
                try ProjectionEngine(log: app.log, keys: TestDataKeys.shared, directory: directory)
            } throws: { error in
                guard case ProjectionError.layoutChanged(found: 1, current: ProjectionEngine.layoutVersion) = error
                else {
                    return false
                }
                return true
            }
        }
    }

    @Test("a writer reads its own write by waiting for its position; waiting past the log times out")
    func readYourWrites() async throws {
        try await withProjections { app in
            try await whileFollowing(app.engine) {
                let ana = try await app.register("Ana")
                let result = try await app.chorus.execute(.createPost(author: ana, text: "fresh"))
                try await app.engine.waitUntilApplied(result.position, timeout: readModelsWait)
                let snapshot = try app.engine.snapshot { try $0.post(PostID(result.createdID!)!, viewer: ana) }
                #expect(snapshot.answer?.text == "fresh")
                #expect(snapshot.position >= result.position)
                #expect(app.engine.lag == 0 || app.engine.position >= result.position)

                let far = LogPosition(app.log.head.rawValue + 100)
                await #expect(throws: ProjectionError.self) {
                    try await app.engine.waitUntilApplied(far, timeout: .milliseconds(100))
                }
            }
        }
    }

    @Test("read models ahead of their log are refused")
    func aheadOfLog() async throws {
        try await withProjections { app in
            _ = try await app.register("Ana")
            try app.engine.catchUp()
            app.engine.close()
            var configuration = LMDBEventLog.Configuration()
            configuration.stateTables = DecisionState.tableNames
            let emptyLog = try LMDBEventLog(directory: app.directory + "/other-log", configuration: configuration)
            defer { emptyLog.close() }
            #expect(throws: ProjectionError.self) {
                try ProjectionEngine(
                    log: emptyLog, keys: TestDataKeys.shared, directory: app.directory + "/projections")
            }
        }
    }
}
