import ChorusDomain
import ChorusLMDBLog
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
                try await importer.finish()
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

    /// A small social log recorded elsewhere: registrations, posts, likes, follows and unfollows, messages, a profile
    /// edited, spread over many commands.
    private static func recordedElsewhere() async throws -> [RecordedEvent] {
        try await withExecutor { chorus, _ in
            var users: [UserID] = []
            for index in 0..<12 { users.append(try await chorus.register("User\(index)")) }
            for (index, user) in users.enumerated() {
                let post = PostID(
                    try await chorus.execute(.createPost(author: user, text: "post \(index)")).createdID!)!
                for other in users where other != user {
                    _ = try await chorus.execute(.follow(follower: other, followee: user))
                    if (index + other.rawValue.count) % 3 == 0 {
                        _ = try await chorus.execute(.like(user: other, post: post))
                    }
                }
                _ = try await chorus.execute(.unfollow(follower: users[(index + 1) % users.count], followee: user))
                _ = try await chorus.execute(.sendMessage(from: user, to: users[(index + 5) % users.count], text: "hi"))
            }
            // An account deleted, its e-mail taken again, and more after it: a deletion removes the e-mail entry
            // holding its user, which an import holding its changes finds among them.
            _ = try await chorus.execute(.deleteAccount(user: users[11], password: "secret-password"))
            let again = try await chorus.register("User11")
            _ = try await chorus.execute(.follow(follower: again, followee: users[0]))
            _ = try await chorus.execute(.deleteAccount(user: users[10], password: "secret-password"))
            _ = try await chorus.execute(.editProfile(user: users[0], name: "Renamed"))
            for user in users[..<10] { _ = try await chorus.execute(.createPost(author: user, text: "later")) }
            return try chorus.log.read(from: 1, limit: 100_000)
        }
    }

    /// `events` in batches of about `size`, each command whole.
    private static func batches(of events: [RecordedEvent], size: Int) -> [[RecordedEvent]] {
        var batches: [[RecordedEvent]] = [[]]
        for event in events {
            if batches[batches.count - 1].count >= size, batches[batches.count - 1].last?.commandID != event.commandID {
                batches.append([])
            }
            batches[batches.count - 1].append(event)
        }
        return batches
    }

    /// The state matches what the log folds to, and the log is sound, each stream at its last version.
    private static func expectComplete(_ log: LMDBEventLog, as recorded: [RecordedEvent]) throws {
        var audit = DecisionStateAudit(log: log, keys: TestDataKeys.shared)
        let report = try audit.run()
        #expect(report.mismatch == nil, "\(String(describing: report.mismatch))")
        #expect(report.entries > 100)
        #expect(try log.verifyIntegrity().isSound)
        for stream in Set(recorded.map(\.stream)) {
            #expect(try log.streamVersion(of: stream) == recorded.last { $0.stream == stream }?.streamVersion)
            #expect(try log.read(stream: stream, limit: 10_000) == recorded.filter { $0.stream == stream })
        }
    }

    @Test("an import into an empty log holds its batches' index and changes, and writes them when it finishes")
    func heldUntilFinished() async throws {
        let recorded = try await Self.recordedElsewhere()
        try await withDecisionLog { log in
            let importer = RecordedEventImporter(log: log, keys: TestDataKeys.shared)
            for batch in Self.batches(of: recorded, size: 40) { try await importer.append(importer.decode(batch)) }
            #expect(log.head == recorded.last?.position)
            // Nothing written yet, the deletions' batches held too: the state has no format until the import finishes.
            #expect(try DecisionStateUpgrade(log: log, keys: TestDataKeys.shared).storedFormat() == 1)
            try await importer.finish()
            #expect(
                try DecisionStateUpgrade(log: log, keys: TestDataKeys.shared).storedFormat()
                    == DecisionStateUpgrade.currentFormat)
            try Self.expectComplete(log, as: recorded)
            // Decisions go on from the imported state: an e-mail imported is taken, a user imported can post.
            let chorus = CommandExecutor(
                log: log, keys: TestDataKeys.shared, media: TestMediaCatalog(), passwordHasher: PasswordHasher(cost: 4))
            await #expect(throws: DomainError.self) { _ = try await chorus.register("User3") }
            await #expect(throws: DomainError.self) { _ = try await chorus.register("User11") }
            _ = try await chorus.register("User10")
            let author = try #require(recorded.first { $0.type == "PostCreated" }.flatMap { UserID($0.actor) })
            _ = try await chorus.execute(.createPost(author: author, text: "after the import"))
            try Self.expectComplete(log, as: try log.read(from: 1, limit: 100_000))
        }
    }

    @Test(
        "an import stopped before it wrote what it held: the log reads its events back, and the state is folded again")
    func heldAndStopped() async throws {
        let recorded = try await Self.recordedElsewhere()
        try await withTemporaryDirectory { directory in
            var configuration = LMDBEventLog.Configuration()
            configuration.stateTables = DecisionState.tableNames
            try await withLog(directory, configuration: configuration) { log in
                let importer = RecordedEventImporter(log: log, keys: TestDataKeys.shared)
                for batch in Self.batches(of: recorded, size: 40) { try await importer.append(importer.decode(batch)) }
                // Closed without `finish()`, as a killed import leaves it.
            }
            try await withLog(directory, configuration: configuration) { log in
                #expect(log.head == recorded.last?.position)
                #expect(try log.read(from: 1, limit: 100_000) == recorded)
                #expect(try await DecisionStateUpgrade(log: log, keys: TestDataKeys.shared).run())
                try Self.expectComplete(log, as: recorded)
            }
        }
    }
}
