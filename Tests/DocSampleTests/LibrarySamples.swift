import ChorusBackend
import ChorusDomain
import ChorusLMDBLog
import ChorusLog
import ChorusProjections
import Logging
import ServiceLifecycle

// The samples of Chorus as a Swift library in docs/SWIFT.md, compiled with the tests (see DocSampleTests).
enum LibrarySamples {
    /// docs/SWIFT.md, "The event log".
    static func eventLog() async throws {
        // sample
        let log = try LMDBEventLog(directory: "chorus-data/log")
        defer { log.close() }
        try await log.withWriter {  // a server runs the writer as a service instead
            let outcome = try await log.append(
                AppendRequest(
                    stream: try StreamID("user-42"), expectedVersion: .noStream,
                    events: [NewEvent(type: "UserRegistered", payload: Array(#"{"name":"김민수"}"#.utf8))],
                    actor: "user-42"))
            // outcome.lastPosition is durable: the commit holding it was fsync'd before append returned.
        }
        for try await event in log.subscribe(after: .start) {  // catches up, then follows live
            print(event.position, event.type)
        }
        // end of sample
    }

    /// ChorusLog's DocC catalog (ChorusLog.md): the seam, with the log in memory.
    static func inMemoryLog() async throws {
        // sample
        let log = InMemoryEventLog()  // in a test; a server opens an LMDBEventLog (ChorusLMDBLog)
        let outcome = try await log.append(
            AppendRequest(
                stream: try StreamID("user-42"), expectedVersion: .noStream,
                events: [NewEvent(type: "UserRegistered", payload: Array(#"{"name":"Ana"}"#.utf8))]))
        for try await event in log.subscribe(after: .start) {  // catches up, then follows live
            print(event.position, event.type, outcome.lastPosition)
            break
        }
        // end of sample
    }

    /// docs/SWIFT.md, "Commands and read models".
    static func commandsAndReadModels() async throws {
        // sample
        let logger = Logger(label: "my-app")
        let backend = try ChorusBackend(data: DataDirectory("chorus-data"), logger: logger)
        defer { backend.close() }
        // The log's writer and the read models following the log, run as `chorus serve` runs them.
        let services = ServiceGroup(services: backend.services(), gracefulShutdownSignals: [.sigterm], logger: logger)
        async let running: Void = services.run()
        let ana = try await backend.execute(
            .registerUser(email: "ana@example.com", password: "secret1", name: "Ana"), idempotencyKey: nil)
        let post = try await backend.execute(
            .createPost(author: UserID(unchecked: ana.createdID!), text: "hello"), idempotencyKey: nil)
        try await backend.readModels.waitUntilApplied(post.position, timeout: .seconds(5))  // read your own write
        let feed = try backend.readModels.snapshot { view in
            try view.homeFeed(viewer: nil, page: PageRequest(limit: 20))
        }
        // feed.answer.items, feed.answer.nextCursor; feed.position is the log position the whole answer reflects
        await services.triggerGracefulShutdown()
        try await running
        // end of sample
    }
}
