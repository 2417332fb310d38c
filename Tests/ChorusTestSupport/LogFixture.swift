import ChorusLMDBLog
import ChorusLog
import Logging

/// Opens the log in `directory`, runs its writer while `body` runs, then stops the writer (committing what `body`
/// appended) and closes the log.
public func withLog<R>(
    _ directory: String, configuration: LMDBEventLog.Configuration = LMDBEventLog.Configuration(),
    logger: Logger = Logger(label: "chorus.log"), _ body: (LMDBEventLog) async throws -> R
) async throws -> R {
    let log = try LMDBEventLog(directory: directory, configuration: configuration, logger: logger)
    defer { log.close() }
    return try await log.withWriter { try await body(log) }
}
