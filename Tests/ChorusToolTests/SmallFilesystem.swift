import ChorusProcesses
import Foundation

/// A size-limited tmpfs mounted for one test, which it can fill to the last byte and free again. Mounting needs
/// root; ``canMount`` says whether this run can.
final class SmallFilesystem {
    let path: String
    private var filler: String { path + "/filler" }

    /// Mounts a tmpfs of `megabytes` at `path` (created if needed).
    init(at path: String, megabytes: Int) throws {
        self.path = path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try Self.run(["mount", "-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", path])
    }

    /// Whether this process may mount a tmpfs: it is root, and a trial mount succeeds.
    static let canMount: Bool = {
        guard geteuid() == 0 else { return false }
        let trial = NSTemporaryDirectory() + "chorus-mount-trial-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: trial) }
        guard let filesystem = try? SmallFilesystem(at: trial, megabytes: 1) else { return false }
        filesystem.unmount()
        return true
    }()

    /// Fills every byte left with a file of zeros.
    func fill() throws {
        let descriptor = open(filler, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        guard descriptor >= 0 else { throw ServerError("could not create \(filler)") }
        defer { close(descriptor) }
        // Large writes first, then page-sized ones for the remainder.
        for size in [1 << 20, 4096, 1] {
            let zeros = [UInt8](repeating: 0, count: size)
            while zeros.withUnsafeBytes({ write(descriptor, $0.baseAddress, size) }) == size {}
        }
        guard errno == ENOSPC else { throw ServerError("filling \(path) stopped with errno \(errno), not ENOSPC") }
    }

    /// Frees what ``fill()`` took.
    func free() throws {
        try FileManager.default.removeItem(atPath: filler)
    }

    /// Frees `megabytes` of what ``fill()`` took.
    func free(megabytes: Int) throws {
        let size = try FileManager.default.attributesOfItem(atPath: filler)[.size] as? Int ?? 0
        guard truncate(filler, off_t(max(0, size - megabytes << 20))) == 0 else {
            throw ServerError("could not shorten \(filler): errno \(errno)")
        }
    }

    func unmount() {
        try? Self.run(["umount", "-l", path])
    }

    private static func run(_ arguments: [String]) throws {
        let run = try ChildProcess.runBlocking("/usr/bin/env", arguments)
        guard run.status == 0 else {
            throw ServerError("\(arguments.joined(separator: " ")) exited with \(run.status): \(run.errors)")
        }
    }
}
