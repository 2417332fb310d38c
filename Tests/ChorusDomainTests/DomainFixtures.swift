import ChorusDomain
import ChorusLMDBLog
import ChorusLog
import ChorusTestSupport
import Foundation

/// A fresh log and executor in a temporary directory; bcrypt at its lowest cost so tests stay fast.
func withExecutor<R>(_ body: (CommandExecutor, TestMediaCatalog) async throws -> R) async throws -> R {
    try await withDecisionLog { log in
        let media = TestMediaCatalog()
        return try await body(
            CommandExecutor(
                log: log, keys: TestDataKeys.shared, media: media, passwordHasher: PasswordHasher(cost: 4)), media)
    }
}

/// A fresh, empty log with the decision state's tables, in a temporary directory.
func withDecisionLog<R>(_ body: (LMDBEventLog) async throws -> R) async throws -> R {
    try await withTemporaryDirectory { path in
        var configuration = LMDBEventLog.Configuration()
        configuration.stateTables = DecisionState.tableNames
        return try await withLog(path, configuration: configuration, body)
    }
}

extension CommandExecutor {
    /// Registers a user and returns its id.
    func register(_ name: String, email: String? = nil) async throws -> UserID {
        let result = try await execute(
            .registerUser(email: email ?? "\(name.lowercased())@example.com", password: "secret-password", name: name))
        return UserID(result.createdID!)!
    }

    /// Every event in the log, decoded.
    func events() throws -> [DomainEvent] {
        try log.read(from: 1, limit: 100_000).map { try DomainEvent(decoding: $0, keys: TestDataKeys.shared) }
    }
}
