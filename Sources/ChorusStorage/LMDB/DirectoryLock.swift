import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive `flock` on a file in a directory, held until released or the process ends (even by SIGKILL).
/// The log writer keeps the head in memory, so only one process may write a log at a time.
package final class DirectoryLock: Sendable {
    /// The locked file's descriptor; -1 once released.
    private let descriptor: Atomic<Int32>

    /// Returns nil when another process still holds the lock after `patience`. A lock just let go can stay held for
    /// a moment: `flock` belongs to the open file, and a child another thread is spawning holds a copy of every
    /// descriptor from its fork until its exec closes them.
    package init?(directory: String, name: String, patience: Duration = .zero) throws(LMDBError) {
        let path = directory + "/" + name
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw LMDBError(errno, "open(\(path))") }
        let clock = ContinuousClock()
        let deadline = clock.now + patience
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            if code == EWOULDBLOCK && clock.now < deadline {
                usleep(10_000)
                continue
            }
            close(descriptor)
            if code == EWOULDBLOCK { return nil }
            throw LMDBError(code, "flock(\(path))")
        }
        self.descriptor = Atomic(descriptor)
    }

    deinit {
        release()
    }

    /// Lets another process take the lock.
    package func release() {
        let descriptor = descriptor.exchange(-1, ordering: .relaxed)
        if descriptor >= 0 { close(descriptor) }
    }
}
