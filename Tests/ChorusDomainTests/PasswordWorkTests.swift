import ChorusDomain
import ChorusTestSupport
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
        try await eventually("the work started", every: .milliseconds(1)) { started.wait(timeout: .now()) == .success }
        let second = Task { try await work.run { 2 } }
        let third = Task { try await work.run { 3 } }
        try await eventually("two waiting", every: .milliseconds(1)) { work.waitingCount == 2 }

        // Awaited through a flag, so that a broken bound fails the test instead of hanging it.
        let fourth = Mutex<Result<Int, any Error>?>(nil)
        Task {
            let outcome = await Result(catching: { try await work.run { 4 } })
            fourth.withLock { $0 = outcome }
        }
        try await eventually("the fourth answered", every: .milliseconds(1)) { fourth.withLock { $0 } != nil }
        #expect(fourth.withLock { if case .failure(let error)? = $0 { error is PasswordWorkBusy } else { false } })
        gate.signal()
        #expect(try await [first.value, second.value, third.value] == [1, 2, 3])
        #expect(work.waitingCount == 0)
        #expect(try await work.run { 5 } == 5, "every slot was given back")
    }
}

extension Result where Failure == any Error {
    /// The outcome of an async throwing call.
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
