import ChorusBackend
import ChorusDomain
import ChorusLMDBLog
import ChorusLog
import ChorusProjections
import ChorusStorage
import ChorusTestSupport
import Foundation
import Logging
import Testing

@Suite("Backend")
struct BackendTests {
    @Test("read models left unsynced by a machine crash (a marker of another boot) are rebuilt before serving")
    func unsyncedAfterMachineCrash() async throws {
        try await withTemporaryDirectory { directory in
            let data = DataDirectory(directory)
            let logger = Logger(label: "test")
            let marker = directory + "/projections.unsynced"
            var backend = try ChorusBackend(data: data, passwordHasher: PasswordHasher(cost: 4), logger: logger)
            #expect(FileManager.default.fileExists(atPath: marker), "marked while serving")
            let result = try await whileRunning([backend.logWriterService]) {
                try await backend.commands.execute(
                    .registerUser(email: "a@example.com", password: "secret1", name: "A"))
            }
            try backend.projections.catchUp()
            backend.close()
            #expect(!FileManager.default.fileExists(atPath: marker), "a clean stop syncs and unmarks")

            let generation = try FileManager.default.destinationOfSymbolicLink(atPath: data.projections)
            try "an earlier boot\n".write(toFile: marker, atomically: true, encoding: .utf8)
            backend = try ChorusBackend(data: data, passwordHasher: PasswordHasher(cost: 4), logger: logger)
            #expect(
                try FileManager.default.destinationOfSymbolicLink(atPath: data.projections) != generation, "rebuilt")
            #expect(backend.projections.position == backend.log.head)
            let user = UserID(unchecked: try #require(result.createdID))
            #expect(try backend.projections.snapshot { try $0.userSummary(user) }.answer?.name == "A")

            // Same boot: a killed process lost nothing from the page cache, so nothing is rebuilt.
            let current = try FileManager.default.destinationOfSymbolicLink(atPath: data.projections)
            backend.close()
            try "\(try String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8))".write(
                toFile: marker, atomically: true, encoding: .utf8)
            let again = try ChorusBackend(data: data, passwordHasher: PasswordHasher(cost: 4), logger: logger)
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: data.projections) == current)
            again.close()
        }
    }

    @Test("writes are refused, appending nothing, while the read models are too far behind; taken again once caught up")
    func writesWaitForLaggingReadModels() async throws {
        try await withTemporaryDirectory { directory in
            let backend = try ChorusBackend(
                data: DataDirectory(directory), maximumWriteLag: 3, passwordHasher: PasswordHasher(cost: 4),
                logger: Logger(label: "test"))
            defer { backend.close() }
            // The read models do not follow the log until their service runs, so every event appended here leaves
            // them behind.
            try await whileRunning([backend.logWriterService]) {
                let ana = try await backend.execute(
                    .registerUser(email: "a@example.com", password: "secret1", name: "Ana"), idempotencyKey: nil)
                let author = UserID(unchecked: try #require(ana.createdID))
                #expect(backend.projections.lag == 2, "a user and her first session")
                _ = try await backend.execute(.createPost(author: author, text: "first"), idempotencyKey: nil)
                #expect(backend.projections.lag == 3)
                // At the bound, a write is still taken.
                _ = try await backend.execute(.createPost(author: author, text: "second"), idempotencyKey: nil)

                let head = backend.log.head
                let refused = await #expect(throws: WritesUnavailable.self) {
                    try await backend.execute(.createPost(author: author, text: "refused"), idempotencyKey: nil)
                }
                #expect(refused?.description.contains("4 events behind") == true, "\(String(describing: refused))")
                #expect(backend.log.head == head, "the refused write appended nothing")

                try await whileRunning([backend.projectionService]) {
                    try await backend.readModels.waitUntilApplied(head, timeout: readModelsWait)
                    let taken = try await backend.execute(
                        .createPost(author: author, text: "taken"), idempotencyKey: nil)
                    #expect(taken.position > head)
                }
            }
        }
    }

    @Test("read models of an older layout are rebuilt from the log before serving")
    func olderLayout() async throws {
        try await withTemporaryDirectory { directory in
            let data = DataDirectory(directory)
            let logger = Logger(label: "test")
            let backend = try ChorusBackend(data: data, passwordHasher: PasswordHasher(cost: 4), logger: logger)
            let result = try await whileRunning([backend.logWriterService]) {
                try await backend.commands.execute(
                    .registerUser(email: "a@example.com", password: "secret1", name: "A"))
            }
            try backend.projections.catchUp()
            backend.close()
            let generation = try FileManager.default.destinationOfSymbolicLink(atPath: data.projections)
            let store = try KeyValueStore(directory: data.projections, tables: ProjectionEngine.tables)
            _ = try store.write { try $0.delete(Array("layout".utf8), in: store.table("checkpoint")) }
            store.close()

            let reopened = try ChorusBackend(data: data, passwordHasher: PasswordHasher(cost: 4), logger: logger)
            defer { reopened.close() }
            #expect(
                try FileManager.default.destinationOfSymbolicLink(atPath: data.projections) != generation, "rebuilt")
            #expect(reopened.projections.position == reopened.log.head)
            let user = UserID(unchecked: try #require(result.createdID))
            #expect(try reopened.projections.snapshot { try $0.userSummary(user) }.answer?.name == "A")
        }
    }

    @Test("the server's appends go through the log's writer thread: its HTTP handlers run on event loops")
    func appendsNeverCommitOnTheCallersThread() async throws {
        try await withTemporaryDirectory { directory in
            let backend = try ChorusBackend(
                data: DataDirectory(directory), passwordHasher: PasswordHasher(cost: 4), logger: Logger(label: "test"))
            defer { backend.close() }
            try await whileRunning([backend.logWriterService]) {
                let author = try await backend.commands.execute(
                    .registerUser(email: "a@example.com", password: "secret1", name: "A"))
                let user = UserID(unchecked: try #require(author.createdID))
                for index in 0..<20 {
                    _ = try await backend.commands.execute(.createPost(author: user, text: "\(index)"))
                }
            }
            let statistics = try #require(backend.log as? LMDBEventLog).statistics
            #expect(statistics.commits >= 21)
            #expect(statistics.commitsOnCallerThread == 0)
        }
    }
}
