import ChorusDomain
import Dispatch
import Synchronization
import Testing

@Suite("Password work")
struct PasswordWorkTests {
    @Test("bcrypt runs a bounded number at once with a bounded number waiting; past that, refused at once")
    func bounds() async throws {
        let work = PasswordWork(concurrency: 1, waitingLimit: 2)
        let (started, gate) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        let first = Task {
            try await work.run {
                started.signal()
                gate.wait()
                return 1
            }
        }
        try await Self.until { started.wait(timeout: .now()) == .success }
        let second = Task { try await work.run { 2 } }
        let third = Task { try await work.run { 3 } }
        try await Self.until { work.waitingCount == 2 }

        // Awaited through a flag, so that a broken bound fails the test instead of hanging it.
        let fourth = Mutex<Result<Int, any Error>?>(nil)
        Task {
            let outcome = await Result(catching: { try await work.run { 4 } })
            fourth.withLock { $0 = outcome }
        }
        try await Self.until { fourth.withLock { $0 } != nil }
        #expect(fourth.withLock { if case .failure(let error)? = $0 { error is PasswordWorkBusy } else { false } })
        gate.signal()
        #expect(try await [first.value, second.value, third.value] == [1, 2, 3])
        #expect(work.waitingCount == 0)
        #expect(try await work.run { 5 } == 5, "every slot was given back")
    }

    /// Polls `condition` every millisecond until it holds, for at most 5 s.
    private static func until(_ condition: () -> Bool) async throws {
        for _ in 0..<5_000 {
            if condition() { return }
            try await Task.sleep(for: .milliseconds(1))
        }
        Issue.record("timed out waiting")
    }
}

extension Result where Failure == any Error {
    /// The outcome of an async throwing call.
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
