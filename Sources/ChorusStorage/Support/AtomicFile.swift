import Foundation

/// Files written whole or not at all: the bytes go to a temporary file beside the target, are synced, and the
/// temporary file is renamed over the target.
package enum AtomicFile {
    package static func write(_ bytes: some Collection<UInt8>, to path: String, permissions: mode_t = 0o644) throws {
        let temporary = path + ".tmp-" + UUID().uuidString.lowercased()
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, permissions)
        guard descriptor >= 0 else { throw POSIXError.current("open \(temporary)") }
        do {
            try writeAll(Array(bytes), to: descriptor)
            guard fsync(descriptor) == 0 else { throw POSIXError.current("fsync \(temporary)") }
            close(descriptor)
        } catch {
            close(descriptor)
            unlink(temporary)
            throw error
        }
        try commit(temporary, as: path)
    }

    /// Renames a synced temporary file over `path`, then syncs the directory so that the rename survives a crash.
    package static func commit(_ temporary: String, as path: String) throws {
        guard rename(temporary, path) == 0 else {
            let error = POSIXError.current("rename \(temporary)")
            unlink(temporary)
            throw error
        }
        let directory = open((path as NSString).deletingLastPathComponent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 {
            fsync(directory)
            close(directory)
        }
    }

    /// Writes every byte to `descriptor`, through interruptions; a failure says what was `doing` and why.
    package static func writeAll(_ bytes: [UInt8], to descriptor: Int32, doing: String = "write") throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                throw POSIXError.current(doing)
            }
            offset += written
        }
    }
}

extension POSIXError {
    /// The error in `errno`, with what was being done.
    package static func current(_ doing: String) -> any Error {
        let code = errno
        return NSError(
            domain: NSPOSIXErrorDomain, code: Int(code),
            userInfo: [NSLocalizedDescriptionKey: "\(doing): \(String(cString: strerror(code)))"])
    }
}
