import ChorusDomain
import ChorusLog
import ChorusProjections
import ChorusTestSupport
import Crypto
import Foundation
import Synchronization
import Testing

/// How a running engine shares the process: Swift concurrency runs every task on as many threads as there are cores,
/// and a server's requests, live streams and services all need one.
@Suite("Projection engine threads")
struct EngineThreadsTests {
    @Test(
        "an engine more than a batch behind applies its batches outside every task: a long catch-up holds none of the shared threads"
    )
    func catchUpRunsOutsideTasks() async throws {
        try await withProjections { app in
            var users: [UserID] = []
            for index in 0..<20 { users.append(try await app.register("User \(index)")) }
            let keys = TaskRecordingDataKeys(TestDataKeys.shared)
            let engine = try ProjectionEngine(
                log: app.log, keys: keys, directory: app.directory + "/recorded", batchSize: 2)
            defer { engine.close() }
            // The first user's events by hand (a build), so that the rest are batches of two, as after a restart.
            #expect(try engine.catchUp(through: LogPosition(2)) == 2)
            keys.forget()

            let following = Task { try await engine.run() }
            defer { following.cancel() }
            try await engine.waitUntilApplied(app.log.head, timeout: .seconds(60))
            following.cancel()
            try await following.value
            // Each user's sign-up opens their sealed fields. The last user's comes in the last batch, applied in the
            // engine's task, as it is once following the log.
            let outside = keys.usersLookedUp(insideATask: false)
            #expect(Set(users[1..<19]).isSubset(of: outside), "looked up outside any task: \(outside.count) users")
            #expect(keys.usersLookedUp(insideATask: true).isSubset(of: [users[19]]))
        }
    }

    @Test("a running engine applies a new log's first events as any batch, stores its layout, and reopens as a rebuild")
    func firstEventsOfANewLog() async throws {
        try await withProjections { app in
            let following = Task { try await app.engine.run() }
            defer { following.cancel() }
            let ana = try await app.register("Ana")
            _ = try await app.post(ana, "first")
            try await app.engine.waitUntilApplied(app.log.head, timeout: .seconds(60))
            following.cancel()
            try await following.value
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
}

/// Data keys that note, for each user looked up, whether the lookup ran inside a Swift task (on one of the shared
/// threads every task runs on) or on a thread of its own.
private final class TaskRecordingDataKeys: PersonalDataKeys {
    private let inner: any PersonalDataKeys
    private let lookups = Mutex<[(user: UserID, insideATask: Bool)]>([])

    init(_ inner: any PersonalDataKeys) { self.inner = inner }

    func usersLookedUp(insideATask: Bool) -> Set<UserID> {
        Set(lookups.withLock { $0.filter { $0.insideATask == insideATask }.map(\.user) })
    }

    func forget() { lookups.withLock { $0.removeAll() } }

    func key(of user: UserID) throws -> SymmetricKey? {
        let insideATask = withUnsafeCurrentTask { $0 != nil }
        lookups.withLock { $0.append((user, insideATask)) }
        return try inner.key(of: user)
    }

    func makeKey(for user: UserID) throws -> SymmetricKey { try inner.makeKey(for: user) }
    func destroy(_ user: UserID) throws { try inner.destroy(user) }
}
