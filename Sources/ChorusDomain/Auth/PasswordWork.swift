import Dispatch

/// bcrypt takes a few hundred milliseconds by design. It runs on a queue of its own, so that a burst of sign-ups and
/// logins never holds the few threads that Swift concurrency runs every other request's tasks on.
enum PasswordWork {
    private static let queue = DispatchQueue(label: "chorus.password-work", attributes: .concurrent)

    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }
}
