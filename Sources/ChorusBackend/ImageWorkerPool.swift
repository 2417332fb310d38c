import ChorusImaging
import ChorusProcesses
import Foundation
import Logging
import Synchronization

/// Runs the image pipeline on uploads in `chorus image-worker` child processes, never in the server: a decoder that a
/// crafted file crashes, or sets looping, or makes allocate without end, ends its child only. Each child is a fresh
/// process for one upload, capped in address space and CPU time by itself before it reads a byte, and killed by the
/// pool past its wall-clock deadline. At most `concurrency` run at once and `queueLength` more wait; past that an
/// upload is refused at once with ``Busy`` (the API's `503` with `Retry-After`) instead of queueing without bound.
public final class ImageWorkerPool: Sendable {
    public struct Limits: Sendable {
        /// Children running at once.
        public var concurrency = max(1, ProcessInfo.processInfo.activeProcessorCount)
        /// Uploads waiting for a child, beyond which uploads are refused.
        public var queueLength = 16
        /// Each child's address space.
        public var memoryBytes = 1 << 30
        public var cpuSeconds = 20
        public var deadline = Duration.seconds(30)
        /// The most a child may write back: two variants of a 2048-px image with room to spare.
        public var replyBytes = 96 << 20

        public init() {}
    }

    /// Every child is busy and the queue is full.
    public struct Busy: Error {}

    public let executable: String
    public let limits: Limits
    private let admission: Mutex<Admission>

    private struct Admission {
        var running = 0
        var waiting: [CheckedContinuation<Bool, Never>] = []
    }

    /// `executable` is a `chorus` binary: by default this process's own when it is `chorus`, else the one beside it
    /// (as in the tests, which run beside the `chorus` that SwiftPM built).
    public init(executable: String = ImageWorkerPool.defaultExecutable, limits: Limits = Limits()) {
        self.executable = executable
        self.limits = limits
        admission = Mutex(Admission())
    }

    public static var defaultExecutable: String {
        let own =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let url = URL(fileURLWithPath: own)
        return url.lastPathComponent == "chorus"
            ? own : url.deletingLastPathComponent().appendingPathComponent("chorus").path
    }

    /// Uploads being processed, and waiting for a child.
    public var load: (running: Int, waiting: Int) { admission.withLock { ($0.running, $0.waiting.count) } }

    /// Runs the pipeline on the upload in `file`; throws ``ImageRefusal`` for an image it refuses (or that killed its
    /// child), ``Busy`` when the queue is full.
    public func process(file: String, claimed: UploadFormat) async throws -> ProcessedImage {
        try await admit()
        defer { release() }
        let (executable, limits) = (executable, limits)
        let arguments = [
            "image-worker", "--input", file, "--type", claimed.rawValue, "--memory-limit", String(limits.memoryBytes),
            "--cpu-seconds", String(limits.cpuSeconds),
        ]
        let (termination, output) = try await BlockingWork.run {
            try ChildProcess.runBounded(
                executable, arguments, environment: Self.environment, deadline: .now + limits.deadline,
                limit: limits.replyBytes)
        }
        switch (termination, ImageWorkerReply(decoding: output)) {
        case (.exited(0), .processed(let image)?): return image
        case (.exited(0), .refused(let refusal)?): throw refusal
        default:
            // A crash, a cap reached, the deadline or a reply too long: the client learns only that it was refused.
            Self.logger.notice(
                "an image worker ended without an answer; the upload is refused",
                metadata: ["termination": "\(termination)", "type": "\(claimed.rawValue)"])
            throw ImageRefusal.invalid("the image could not be decoded")
        }
    }

    private static let logger = Logger(label: "chorus.image-worker")

    /// No crash report (its standard error is discarded, and a crash is an answer); two malloc arenas, not one a
    /// thread, whose reservations the child's address-space cap would count.
    private static let environment = ["SWIFT_BACKTRACE": "enable=no", "MALLOC_ARENA_MAX": "2"]

    private func admit() async throws {
        let admitted = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let answer = admission.withLock { state -> Bool? in
                if state.running < limits.concurrency {
                    state.running += 1
                    return true
                }
                guard state.waiting.count < limits.queueLength else { return false }
                state.waiting.append(continuation)
                return nil
            }
            if let answer { continuation.resume(returning: answer) }
        }
        guard admitted else { throw Busy() }
    }

    /// Hands this slot to the first upload waiting, if any: `running` stays counted for it.
    private func release() {
        let next = admission.withLock { state -> CheckedContinuation<Bool, Never>? in
            guard !state.waiting.isEmpty else {
                state.running -= 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume(returning: true)
    }
}
