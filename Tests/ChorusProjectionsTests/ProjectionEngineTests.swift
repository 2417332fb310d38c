import ChorusDemo
import ChorusDomain
import ChorusLog
import ChorusProjections
import ChorusTestSupport
import Testing

@Suite("Projection engine")
struct ProjectionEngineTests {
    @Test("a rebuild from the log equals the read models built live, table by table, key by key, byte for byte")
    func rebuildEqualsLive() async throws {
        try await withProjections(batchSize: 7) { app in
            let live = Task { try await app.engine.run() }
            let summary = try await DemoWorkload(seed: 11, events: 1_500).run(on: app.chorus)
            #expect(summary.events >= 1_500 && summary.posts > 100)
            try await app.engine.waitUntilApplied(app.log.head, timeout: .seconds(30))
            live.cancel()
            try await live.value

            let rebuilt = app.directory + "/rebuilt"
            let position = try ProjectionEngine.rebuild(log: app.log, into: rebuilt)
            #expect(position == app.log.head)
            let liveTables = try dumpReadModels(app.engine.store)
            let rebuiltTables = try dumpReadModels(atDirectory: rebuilt)
            for name in ProjectionEngine.tables.map(\.name) {
                #expect(liveTables[name] == rebuiltTables[name], "table \(name) differs")
            }
            #expect((liveTables["feeds"]?.count ?? 0) > summary.posts, "feeds fanned out")
        }
    }

    @Test("time travel: the read models rebuilt up to a position equal those caught up one event at a time to it")
    func timeTravel() async throws {
        try await withProjections(batchSize: 1) { app in
            _ = try await DemoWorkload(seed: 5, events: 400).run(on: app.chorus)
            let middle = LogPosition(app.log.head.rawValue / 2)
            let past = app.directory + "/past"
            #expect(try ProjectionEngine.rebuild(log: app.log, into: past, through: middle) == middle)
            #expect(try app.engine.catchUp(through: middle) == Int(middle.rawValue))
            #expect(app.engine.position == middle)
            let pastTables = try dumpReadModels(atDirectory: past)
            #expect(try dumpReadModels(app.engine.store) == pastTables)

            // Reopened read models resume from their checkpoint: nothing is applied twice.
            app.engine.close()
            let reopened = try ProjectionEngine(log: app.log, directory: app.directory + "/projections")
            defer { reopened.close() }
            #expect(reopened.position == middle)
            try reopened.catchUp()
            let full = app.directory + "/full"
            _ = try ProjectionEngine.rebuild(log: app.log, into: full)
            #expect(try dumpReadModels(reopened.store) == dumpReadModels(atDirectory: full))
        }
    }

    @Test("a writer reads its own write by waiting for its position; waiting past the log times out")
    func readYourWrites() async throws {
        try await withProjections { app in
            let live = Task { try await app.engine.run() }
            defer { live.cancel() }
            let ana = try await app.register("Ana")
            let result = try await app.chorus.execute(.createPost(author: ana, text: "fresh"))
            try await app.engine.waitUntilApplied(result.position, timeout: .seconds(5))
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

    @Test("read models ahead of their log are refused")
    func aheadOfLog() async throws {
        try await withProjections { app in
            _ = try await app.register("Ana")
            try app.engine.catchUp()
            app.engine.close()
            var configuration = EventLogConfiguration()
            configuration.stateTables = DecisionState.tableNames
            let emptyLog = try EventLog(directory: app.directory + "/other-log", configuration: configuration)
            defer { emptyLog.close() }
            #expect(throws: ProjectionError.self) {
                try ProjectionEngine(log: emptyLog, directory: app.directory + "/projections")
            }
        }
    }
}
