import CSpawn
import Foundation
import Glibc
import Synchronization

/// A program run as a child of this process: `chorus serve` in the tool tests, PostgreSQL's programs for the cluster
/// tests and benchmarks, `wrk` and rebuild workers in the benchmarks.
///
/// Not Foundation's `Process`: in Swift 6.3.1 its `run()` copies 256 bytes from each `/proc/self/fd` entry, past the
/// end of its buffer when the process holds over a thousand descriptors (swift-corelibs-foundation pull request 5472),
/// which crashed the test process; and its notice of a child's exit was sometimes lost, leaving `waitUntilExit()` to
/// wait for ever. Nor swift-subprocess, which keeps a child only for the length of a closure, where these children
/// belong to objects (a server a test starts, stops and restarts). This one is posix_spawn and waitpid: only it reaps
/// its child, and it signals the child only until it has reaped it, so never another process given the same id.
public final class ChildProcess: Sendable {
    /// Where one of the child's standard streams goes.
    public enum Stream: Sendable {
        /// This process's own.
        case inherited
        /// `/dev/null`.
        case discarded
        /// A file, created or emptied first.
        case file(String)
        /// A pipe, whose other end is ``output`` (standard output) or ``errors`` (standard error).
        case pipe
    }

    public let processIdentifier: pid_t
    /// The reading end of the child's standard output when it is ``Stream/pipe``.
    public let output: FileHandle?
    /// The reading end of the child's standard error when it is ``Stream/pipe``.
    public let errors: FileHandle?
    /// The child's exit status once reaped: its exit code, or the number of the signal that ended it.
    private let status = Mutex<Termination?>(nil)

    /// How the child ended.
    public enum Termination: Sendable, Equatable {
        case exited(Int32)
        case signalled(Int32)
        /// Reaped by someone else (a `waitpid(-1)` elsewhere in this process), who kept the status.
        case lost

        /// The exit code, or the signal's number, as Foundation's `terminationStatus` gives them; -1 when lost.
        public var status: Int32 {
            switch self {
            case .exited(let code): code
            case .signalled(let signal): signal
            case .lost: -1
            }
        }
    }

    /// Starts `executable` (a path) with `arguments`, this process's environment with `environment` over it, and the
    /// given streams; its standard input is `/dev/null`.
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:], directory: String? = nil,
        output: Stream = .inherited, errors: Stream = .inherited
    ) throws {
        var opened: [Int32] = []
        defer { for descriptor in opened { close(descriptor) } }
        func open(_ path: String, flags: Int32) throws -> Int32 {
            let descriptor = Glibc.open(path, flags | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else { throw ChildProcessError("cannot open \(path)", errno: errno) }
            opened.append(descriptor)
            return descriptor
        }
        /// The descriptor the child gets, and the reading end of a pipe for this process.
        func descriptor(for stream: Stream) throws -> (child: Int32, reader: FileHandle?) {
            switch stream {
            case .inherited: return (-1, nil)
            case .discarded: return (try open("/dev/null", flags: O_WRONLY), nil)
            case .file(let path): return (try open(path, flags: O_WRONLY | O_CREAT | O_TRUNC), nil)
            case .pipe:
                var ends: [Int32] = [-1, -1]
                guard chorus_pipe(&ends) == 0 else { throw ChildProcessError("cannot make a pipe", errno: errno) }
                opened.append(ends[1])
                return (ends[1], FileHandle(fileDescriptor: ends[0], closeOnDealloc: true))
            }
        }
        let input = try open("/dev/null", flags: O_RDONLY)
        let (outputDescriptor, output) = try descriptor(for: output)
        let (errorDescriptor, errors) = try descriptor(for: errors)
        self.output = output
        self.errors = errors

        let variables = ProcessInfo.processInfo.environment.merging(environment) { $1 }.map { "\($0)=\($1)" }
        var processIdentifier: pid_t = 0
        let result = Self.withCStrings([executable] + arguments) { argv in
            Self.withCStrings(variables) { envp in
                chorus_spawn(
                    &processIdentifier, executable, argv, envp, directory, input, outputDescriptor, errorDescriptor)
            }
        }
        guard result == 0 else { throw ChildProcessError("cannot start \(executable)", errno: result) }
        self.processIdentifier = processIdentifier
    }

    /// Runs `executable` to its end and returns its status with all it wrote to standard output and to standard
    /// error, both read as they come so that neither pipe, full, can stall it. Waits on a thread of its own.
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:], directory: String? = nil
    ) async throws -> (status: Int32, output: String, errors: String) {
        try await BlockingWork.run {
            try runBlocking(executable, arguments, environment: environment, directory: directory)
        }
    }

    /// ``run(_:_:environment:directory:)`` on the calling thread, blocked until the child ends: for code that is not
    /// async (an async caller would hold one of Swift concurrency's few threads all that time).
    public static func runBlocking(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:], directory: String? = nil
    ) throws -> (status: Int32, output: String, errors: String) {
        let child = try ChildProcess(
            executable, arguments, environment: environment, directory: directory, output: .pipe, errors: .pipe)
        let (output, errors) = child.collect(deadline: nil, limit: nil)
        return (
            child.waitForExit(), String(decoding: output, as: UTF8.self), String(decoding: errors, as: UTF8.self)
        )
    }

    /// Runs `executable` to its end, on the calling thread, and returns how it ended with the bytes it wrote to
    /// standard output; its standard error is discarded. Past `deadline`, or once its output passes `limit` bytes, the
    /// child is killed (SIGKILL): for a child that handles untrusted input and may run away.
    public static func runBounded(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:],
        deadline: ContinuousClock.Instant,
        limit: Int
    ) throws -> (termination: Termination, output: [UInt8]) {
        let child = try ChildProcess(
            executable, arguments, environment: environment, output: .pipe, errors: .discarded)
        let (output, _) = child.collect(deadline: deadline, limit: limit)
        child.waitForExit()
        return (child.termination ?? .lost, output)
    }

    /// Reads the child's piped standard output and error as they come, so that neither pipe, full, can stall it, until
    /// both end; kills the child past `deadline` or once more than `limit` bytes came.
    private func collect(deadline: ContinuousClock.Instant?, limit: Int?) -> (output: [UInt8], errors: [UInt8]) {
        var output: [UInt8] = []
        var errors: [UInt8] = []
        /// The pipes not yet at their end, each with whether it is standard output.
        var streams = [self.output, self.errors].enumerated().compactMap { index, handle in
            handle.map { ($0.fileDescriptor, index == 0) }
        }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var killed = false
        while !streams.isEmpty {
            var timeout: Int32 = -1
            if let deadline, !killed {
                let left = ContinuousClock.now.duration(to: deadline)
                guard left > .zero else {
                    send(SIGKILL)
                    killed = true
                    continue
                }
                let (seconds, attoseconds) = left.components
                timeout = Int32(min(seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1, 60_000))
            }
            var polled = streams.map { pollfd(fd: $0.0, events: Int16(POLLIN), revents: 0) }
            guard poll(&polled, nfds_t(polled.count), timeout) >= 0 || errno == EINTR else { break }
            for (index, entry) in polled.enumerated().reversed() where entry.revents != 0 {
                let count = buffer.withUnsafeMutableBytes { read(entry.fd, $0.baseAddress, $0.count) }
                if count > 0 {
                    if streams[index].1 { output += buffer[..<count] } else { errors += buffer[..<count] }
                } else if count == 0 || errno != EINTR {
                    streams.remove(at: index)
                }
            }
            if let limit, output.count > limit, !killed {
                send(SIGKILL)
                killed = true
            }
        }
        return (output, errors)
    }

    /// Whether the child has not exited yet.
    public var isRunning: Bool { reap(blocking: false) == nil }

    /// How the child ended; nil while it runs.
    public var termination: Termination? { reap(blocking: false) }

    /// Blocks until the child exits; returns its status (``Termination/status``). From async code, ``exited()``.
    @discardableResult
    public func waitForExit() -> Int32 {
        while true {
            if let ended = reap(blocking: true) { return ended.status }
        }
    }

    /// Waits, without holding up a thread, until the child exits; returns its status (``Termination/status``).
    public func exited() async -> Int32 {
        while true {
            if let ended = reap(blocking: false) { return ended.status }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Sends `signal` to the child, unless it has been reaped already.
    public func send(_ signal: Int32) {
        status.withLock { status in
            guard status == nil else { return }
            _ = kill(processIdentifier, signal)
        }
    }

    /// Sends SIGTERM.
    public func terminate() { send(SIGTERM) }

    deinit {
        // Not left a zombie, nor running: a test that ends early still stops what it started.
        if isRunning {
            send(SIGKILL)
            waitForExit()
        }
    }

    /// The child's end, reaping it if it has exited: waiting for that first with `blocking`.
    private func reap(blocking: Bool) -> Termination? {
        if blocking, status.withLock({ $0 }) == nil {
            // Waits without reaping (WNOWAIT), outside the lock: until it is reaped under the lock below, the exited
            // child keeps its id, which ``send(_:)`` may still signal harmlessly.
            var info = siginfo_t()
            while waitid(P_PID, id_t(processIdentifier), &info, WEXITED | WNOWAIT) != 0, errno == EINTR {}
        }
        return status.withLock { status in
            if let status { return status }
            var code: Int32 = 0
            let ended: Termination
            switch waitpid(processIdentifier, &code, WNOHANG) {
            case processIdentifier:
                // WIFEXITED, WEXITSTATUS and WTERMSIG, which Swift does not import.
                ended = code & 0x7f == 0 ? .exited((code >> 8) & 0xff) : .signalled(code & 0x7f)
            case -1 where errno == ECHILD: ended = .lost
            default: return nil
            }
            status = ended
            return ended
        }
    }

    /// `strings` as a NULL-terminated array of C strings, for the length of `body`.
    private static func withCStrings<R>(
        _ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) throws -> R
    ) rethrows -> R {
        let pointers = strings.map { strdup($0) } + [nil]
        defer { for pointer in pointers { free(pointer) } }
        return try pointers.withUnsafeBufferPointer { try body($0.baseAddress!) }
    }
}

public struct ChildProcessError: Error, CustomStringConvertible {
    public let description: String

    init(_ what: String, errno number: Int32) {
        description = "\(what): \(String(cString: strerror(number)))"
    }
}
