import Foundation

extension Process {
    /// Where a child stands, asked of the kernel as well as of Foundation: with many children coming and going,
    /// Foundation's notice of one child's exit is sometimes lost on Linux, and `waitUntilExit()` or
    /// `terminationHandler` then wait forever. The kernel is asked without reaping the child (`WNOWAIT`), so that
    /// Foundation's own bookkeeping still finds it.
    public enum ChildState: Sendable, Equatable {
        case running
        case exited(status: Int32)
        /// Reaped already, by Foundation, which has not said so yet.
        case reaped
    }

    public var childState: ChildState {
        if !isRunning { return .exited(status: terminationStatus) }
        var info = siginfo_t()
        guard waitid(P_PID, id_t(processIdentifier), &info, WEXITED | WNOHANG | WNOWAIT) == 0 else {
            return errno == ECHILD ? (isRunning ? .reaped : .exited(status: terminationStatus)) : .running
        }
        let pid = info._sifields._sigchld.si_pid
        return pid == processIdentifier ? .exited(status: info._sifields._sigchld.si_status) : .running
    }

    /// Whether the child is still running, by ``childState``.
    public var isStillRunning: Bool { childState == .running }

    /// Blocks until the child has exited and returns its status: -1 when Foundation reaped it and never told its
    /// status within a second.
    @discardableResult
    public func waitForExit() -> Int32 {
        var reapedSince: Date?
        while true {
            switch childState {
            case .exited(let status): return status
            case .reaped:
                reapedSince = reapedSince ?? Date()
                if Date().timeIntervalSince(reapedSince!) > 1 { return -1 }
            case .running: break
            }
            usleep(5_000)
        }
    }
}
