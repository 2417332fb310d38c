import Foundation
import Synchronization

/// Samples this process's anonymous resident memory (`RssAnon` in /proc/self/status) on a thread of its own and
/// keeps the peak. Anonymous memory is what the process itself holds; LMDB's mapped file pages are page cache, which
/// the kernel can drop, and would make any figure track the size of the files read.
final class MemorySampler: Sendable {
    private let peakKilobytes = Atomic<Int>(0)
    private let stopped = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    init(interval: Duration = .milliseconds(10)) {
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
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return }
        for line in status.split(separator: "\n") where line.hasPrefix("RssAnon:") {
            let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? 0
            var current = peakKilobytes.load(ordering: .relaxed)
            while kilobytes > current {
                let (exchanged, original) = peakKilobytes.compareExchange(
                    expected: current, desired: kilobytes, ordering: .relaxed)
                if exchanged { break }
                current = original
            }
        }
    }
}
