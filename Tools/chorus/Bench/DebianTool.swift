import ChorusProcesses
import Foundation

/// A command-line tool from Debian's packages that a benchmark runs: found on `PATH`, or installed with apt-get when
/// the bench runs as root.
enum DebianTool {
    /// The path of `command`, installing `package` for it when it is missing.
    static func locateOrInstall(_ command: String, from package: String) throws -> String {
        if let found = which(command) { return found }
        guard getuid() == 0 else {
            throw BenchmarkError(
                "\(command) is not installed; install it (apt-get install \(package)) or run as root to let the "
                    + "bench do it")
        }
        // One installation at a time, whatever the package: apt refuses a second `apt-get` while one runs, rather
        // than wait.
        let lock = open("/tmp/chorus-install.lock", O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard lock >= 0, flock(lock, LOCK_EX) == 0 else {
            throw BenchmarkError("could not lock \(package)'s installation")
        }
        defer { close(lock) }
        if let found = which(command) { return found }
        printProgress("installing \(package) from Debian's packages")
        var said = ""
        for arguments in [["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", package]] {
            said += try ChildProcess.runBlocking(
                "/usr/bin/env", arguments, environment: ["DEBIAN_FRONTEND": "noninteractive"]
            ).errors
        }
        guard let found = which(command) else { throw BenchmarkError("could not install \(package): \(said)") }
        return found
    }

    private static func which(_ name: String) -> String? {
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }
}
