import Foundation
import Synchronization

/// Samples a memory figure in kilobytes, by default this process's anonymous resident memory (`RssAnon` in
/// /proc/self/status), on a thread of its own and keeps the peak. Anonymous memory is what a process itself holds;
/// LMDB's mapped file pages are page cache, which the kernel can drop, and would make any figure track the size of the
/// files read.
final class MemorySampler: Sendable {
    private let peakKilobytes = Atomic<Int>(0)
    private let stopped = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let measure: @Sendable () -> Int?

    init(
        interval: Duration = .milliseconds(10),
        measure: @escaping @Sendable () -> Int? = { processStatusKilobytes("RssAnon") }
    ) {
        self.measure = measure
        let thread = Thread { [self] in
            while !stopped.load(ordering: .relaxed) {
                sample()
                Thread.sleep(forTimeInterval: Double(interval.components.attoseconds) / 1e18)
            }
            sample()
            finished.signal()
        }
        thread.start()
    }

    /// Stops sampling and returns the peak in MiB.
    func stop() -> Double {
        stopped.store(true, ordering: .relaxed)
        finished.wait()
        return Double(peakKilobytes.load(ordering: .relaxed)) / 1024
    }

    private func sample() {
        guard let kilobytes = measure() else { return }
        var current = peakKilobytes.load(ordering: .relaxed)
        while kilobytes > current {
            let (exchanged, original) = peakKilobytes.compareExchange(
                expected: current, desired: kilobytes, ordering: .relaxed)
            if exchanged { break }
            current = original
        }
    }
}

/// A figure in kilobytes from `/proc/<process>/status` (`RssAnon`, `VmRSS`, …); nil when there is no such process.
func processStatusKilobytes(_ field: String, of process: String = "self") -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/\(process)/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") })
    else { return nil }
    return Int(line.split(separator: " ", omittingEmptySubsequences: true)[1])
}

extension MemorySampler {
    /// The anonymous memory of `process`.
    static func anonymousMemory(of process: Int32) -> MemorySampler {
        MemorySampler { processStatusKilobytes("RssAnon", of: String(process)) }
    }

    /// The resident memory of `process`'s children together (image workers, say), whichever thread started them.
    static func childrenMemory(of process: Int32) -> MemorySampler {
        MemorySampler {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(process)/task")) ?? []
            let children = tasks.flatMap { task in
                ((try? String(contentsOfFile: "/proc/\(process)/task/\(task)/children", encoding: .utf8)) ?? "")
                    .split(separator: " ")
            }
            return children.compactMap { processStatusKilobytes("VmRSS", of: String($0)) }.reduce(0, +)
        }
    }
}
