import ChorusDomain
import ChorusLMDBLog
import ChorusLog
import ChorusProjections
import ChorusTestSupport
import Foundation

/// A log, an executor and a projection engine in a fresh temporary directory.
struct ProjectionHarness {
    let directory: String
    let log: LMDBEventLog
    let chorus: CommandExecutor
    let media: TestMediaCatalog
    let engine: ProjectionEngine

    /// The answer of `body` on the read models once they have applied everything in the log.
    func read<Answer: Sendable>(_ body: (borrowing ReadView) throws -> Answer) throws -> Answer {
        try engine.catchUp()
        return try engine.snapshot(body).answer
    }

    func register(_ name: String) async throws -> UserID {
        let result = try await chorus.execute(
            .registerUser(
                email:
                    "\(name.lowercased().filter { $0.isLetter || $0.isNumber })-\(UUID().uuidString.prefix(6))@example.com",
                password: "secret1", name: name))
        return UserID(result.createdID!)!
    }

    func post(_ author: UserID, _ text: String) async throws -> PostID {
        PostID(try await chorus.execute(.createPost(author: author, text: text)).createdID!)!
    }
}

func withProjections<R>(batchSize: Int = 1024, _ body: (ProjectionHarness) async throws -> R) async throws -> R {
    try await withTemporaryDirectory { directory in
        var configuration = LMDBEventLog.Configuration()
        configuration.stateTables = DecisionState.tableNames
        return try await withLog(directory + "/log", configuration: configuration) { log in
            let media = TestMediaCatalog()
            let chorus = CommandExecutor(
                log: log, keys: TestDataKeys.shared, media: media, passwordHasher: PasswordHasher(cost: 4))
            let engine = try ProjectionEngine(
                log: log, keys: TestDataKeys.shared, directory: directory + "/projections", batchSize: batchSize)
            defer { engine.close() }
            return try await body(
                ProjectionHarness(directory: directory, log: log, chorus: chorus, media: media, engine: engine))
        }
    }
}

/// Runs `body` while `engine` follows the log, as a server's does; the engine stops when `body` returns or throws.
func whileFollowing<R>(_ engine: ProjectionEngine, _ body: () async throws -> R) async throws -> R {
    let following = Task { try await engine.run() }
    defer { following.cancel() }
    let result = try await body()
    following.cancel()
    try await following.value
    return result
}
