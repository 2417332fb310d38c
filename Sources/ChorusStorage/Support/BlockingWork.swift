import Dispatch

/// Long synchronous work (bcrypt, building read models) on a queue of its own, so that it never holds one of the
/// few threads Swift concurrency runs every other task on.
package enum BlockingWork {
    private static let queue = DispatchQueue(label: "chorus.blocking-work", attributes: .concurrent)

    package static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }
}
