import ChorusBackend
import ChorusImaging
import ChorusTestSupport
import Foundation
import Testing

/// The pool's defences against a worker that runs away, each with a stand-in worker (a shell script) that does what a
/// hostile image could make the real one do.
@Suite("Image workers: limits")
struct ImageWorkerPoolTests {
    @Test("a worker past its deadline is killed and the upload refused; one more than the queue holds is Busy at once")
    func deadlineAndQueue() async throws {
        // The stand-in sleeps far past the bound below, which leaves room for a loaded machine: only a kill ends it soon.
        try await withWorker("exec sleep 600") { script in
            var limits = ImageWorkerPool.Limits()
            (limits.concurrency, limits.queueLength, limits.deadline) = (1, 1, .seconds(1))
            let pool = ImageWorkerPool(executable: script, limits: limits)
            let started = ContinuousClock.now
            let first = Task { await Self.refusal(pool) }
            try await eventually("the first upload runs") { pool.load == (1, 0) }
            let second = Task { await Self.refusal(pool) }
            try await eventually("the second upload waits") { pool.load == (1, 1) }
            await #expect(throws: ImageWorkerPool.Busy.self) {
                try await pool.process(file: "/dev/null", claimed: .png)
            }
            #expect(await first.value == .invalid("the image could not be decoded"))
            #expect(await second.value == .invalid("the image could not be decoded"))
            #expect(started.duration(to: .now) < .seconds(300), "killed at the deadline, not after the sleep")
            #expect(pool.load == (0, 0))
        }
    }

    @Test("a worker that crashes, or writes without end, is an invalid image")
    func crashAndFlood() async throws {
        for body in ["kill -SEGV $$", "exec yes chorus"] {
            try await withWorker(body) { script in
                var limits = ImageWorkerPool.Limits()
                limits.replyBytes = 1 << 20
                let pool = ImageWorkerPool(executable: script, limits: limits)
                #expect(await Self.refusal(pool) == .invalid("the image could not be decoded"), "\(body)")
            }
        }
    }

    /// What the pool answers for an upload: the refusal, or nil when it processed or failed otherwise.
    static func refusal(_ pool: ImageWorkerPool) async -> ImageRefusal? {
        do {
            _ = try await pool.process(file: "/dev/null", claimed: .png)
            return nil
        } catch let refusal as ImageRefusal {
            return refusal
        } catch {
            return nil
        }
    }

    func withWorker(_ body: String, _ run: (String) async throws -> Void) async throws {
        try await withTemporaryDirectory { directory in
            let script = directory + "/worker"
            try Data("#!/bin/sh\n\(body)\n".utf8).write(to: URL(fileURLWithPath: script))
            chmod(script, 0o755)
            try await run(script)
        }
    }
}
