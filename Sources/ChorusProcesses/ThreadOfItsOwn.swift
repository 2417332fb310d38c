import Foundation

/// Runs `body`, which blocks (waiting for a child process, reading its pipes), on a thread of its own, and waits for it
/// without holding one of Swift concurrency's threads: there are only as many of those as cores, and while a task
/// blocks one, every other task in the process has one fewer to run on.
public func onThreadOfItsOwn<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
