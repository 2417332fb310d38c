import ConsoleKitTerminal
import Foundation

/// A status line on standard error, which pipes and `--json` leave alone.
func printProgress(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}

/// Progress of long work, with its rate and what is left: ConsoleKit's progress bar when standard output is a
/// terminal, else a line on standard error at most every two seconds (for logs and CI).
final class WorkProgress {
    private let title: String
    private let unit: String
    private var total: Int
    private let bar: ActivityIndicator<ProgressBar>?
    private var lines: ProgressLines

    /// - Parameter allowsBar: false when standard output carries the command's own output (an export to it).
    init(_ title: String, total: Int, unit: String, allowsBar: Bool = true) {
        self.title = title
        self.total = total
        self.unit = unit
        lines = ProgressLines(total: total, unit: unit)
        if allowsBar, isatty(STDOUT_FILENO) == 1 {
            let bar = Terminal().progressBar(title: title)
            bar.start(refreshRate: 100)
            self.bar = bar
        } else {
            bar = nil
        }
    }

    func update(_ done: Int, of total: Int? = nil) {
        if let total { self.total = total }
        guard let bar else {
            lines.update(done, of: self.total)
            return
        }
        let (rate, left) = lines.pace(done, of: self.total)
        bar.activity.title = "\(title): \(done)/\(self.total) \(unit), \(Int(rate)) \(unit)/s, ETA \(left) s"
        bar.activity.currentProgress = self.total > 0 ? Double(done) / Double(self.total) : 1
    }

    /// Ends the bar (or prints the last line).
    func finish(_ succeeded: Bool = true) {
        guard let bar else { return }
        if succeeded { bar.succeed() } else { bar.fail() }
    }
}

/// Progress as plain lines on standard error, at most every two seconds.
struct ProgressLines {
    let total: Int
    let unit: String
    private let clock = ContinuousClock()
    private let started: ContinuousClock.Instant
    private var lastLine: ContinuousClock.Instant

    init(total: Int, unit: String) {
        self.total = total
        self.unit = unit
        started = clock.now
        lastLine = clock.now
    }

    mutating func update(_ done: Int, of total: Int? = nil) {
        let total = total ?? self.total
        let now = clock.now
        guard now - lastLine >= .seconds(2) || done >= total else { return }
        lastLine = now
        let (rate, remaining) = pace(done, of: total)
        // Nothing to do (an empty file) is all of it done.
        let percent = total > 0 ? Int(Double(done) * 100 / Double(total)) : 100
        printProgress(
            "\(done)/\(total) \(unit) (\(percent)%), "
                + "\(Int(rate)) \(unit)/s, about \(remaining) s left")
    }

    /// Units per second since the start, and the seconds the rest would take at that rate.
    func pace(_ done: Int, of total: Int) -> (rate: Double, secondsLeft: Int) {
        let elapsed = (clock.now - started).seconds
        let rate = elapsed > 0 ? Double(done) / elapsed : 0
        return (rate, rate > 0 ? Int(Double(max(0, total - done)) / rate) : 0)
    }
}
