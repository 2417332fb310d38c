import Foundation

/// Synchronous work that blocks or runs long (waiting for a child process, an online rebuild, sealing an upload, a
/// blocking socket in a test), kept off the few threads Swift concurrency runs every other task on: there are as many
/// as cores, and while one is held every other task in the process has one fewer.
public enum BlockingWork {
    /// Runs `body` on a thread of its own: waits must never queue behind one another (as on a pool as wide as the
    /// cores), and the work is coarse enough that starting a thread is nothing beside it.
    public static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }
}
