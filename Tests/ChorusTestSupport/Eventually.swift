/// A wait that ended before what it waited for happened.
public struct TimedOut: Error, CustomStringConvertible {
    public let description: String
}

/// Waits until `condition` holds, asking again every `interval`; throws ``TimedOut``, naming `what`, once `timeout`
/// has passed without it. The one way a test waits for what another task or process does: never a fixed sleep.
public func eventually(
    _ what: @autoclosure () -> String, timeout: Duration = .seconds(30), every interval: Duration = .milliseconds(10),
    _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while try await !condition() {
        guard ContinuousClock.now < deadline else { throw TimedOut(description: "\(what()): not within \(timeout)") }
        try await Task.sleep(for: interval)
    }
}

/// `body`'s answer once it stops throwing, asking again every `interval`; its last error once `timeout` has passed.
public func eventually<Answer>(
    timeout: Duration = .seconds(30), every interval: Duration = .milliseconds(200),
    _ body: () async throws -> Answer
) async throws -> Answer {
    let deadline = ContinuousClock.now + timeout
    while true {
        do {
            return try await body()
        } catch {
            guard ContinuousClock.now < deadline else { throw error }
        }
        try await Task.sleep(for: interval)
    }
}
