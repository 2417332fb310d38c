import Dispatch
import Foundation
import Synchronization

/// Where bcrypt runs: at most `concurrency` hashes at once, on threads of their own (never the few that Swift
/// concurrency runs every task on, never the log writer), and at most `waitingLimit` more waiting their turn. Past
/// that a sign-up or login is refused at once with ``PasswordWorkBusy``: a flood of them can neither start a thread
/// each nor queue without end, and the rest of the server keeps answering.
public final class PasswordWork: Sendable {
    public let concurrency: Int
    public let waitingLimit: Int

    private struct State {
        var running = 0
        /// Resumed in order, each handed the slot of a hash that finished.
        var waiting: [CheckedContinuation<Bool, Never>] = []
    }

    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "chorus.password-work", attributes: .concurrent)

    /// At cost 12 a hash takes about a quarter of a second per core: 256 waiting on 2 cores is about half a minute.
    public init(concurrency: Int = ProcessInfo.processInfo.activeProcessorCount, waitingLimit: Int = 256) {
        precondition(concurrency > 0 && waitingLimit >= 0)
        self.concurrency = concurrency
        self.waitingLimit = waitingLimit
    }

    /// How many wait for their turn now.
    public var waitingCount: Int { state.withLock { $0.waiting.count } }

    /// Runs `body` (bcrypt) when a slot is free; throws ``PasswordWorkBusy`` at once when too many already wait.
    public func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await takeSlot()
        defer { giveBackSlot() }
        return try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }

    private func takeSlot() async throws {
        // Decided and, if it must wait, queued under one lock, so that no slot can be given back in between. A waiter
        // is resumed with `false` when a finishing hash hands it its slot.
        let refused = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let decided: Bool? = state.withLock { state in
                if state.running < concurrency {
                    state.running += 1
                    return false
                }
                guard state.waiting.count < waitingLimit else { return true }
                state.waiting.append(continuation)
                return nil
            }
            if let decided { continuation.resume(returning: decided) }
        }
        if refused { throw PasswordWorkBusy(waiting: waitingLimit) }
    }

    private func giveBackSlot() {
        let next = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            guard !state.waiting.isEmpty else {
                state.running -= 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume(returning: false)
    }
}

/// Too many sign-ups and logins wait for their password to be checked; retry shortly.
public struct PasswordWorkBusy: Error, Sendable, CustomStringConvertible {
    public let waiting: Int
    public var description: String { "\(waiting) sign-ups and logins already wait for their password to be checked" }
}
