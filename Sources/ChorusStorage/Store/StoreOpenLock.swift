import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Tells whether a ``CompactableStore`` is open anywhere else. Every open of the store, in this process or another,
/// holds a shared `flock` on `opened.lock` in its directory until it closes; ``withSoleOpen(_:)`` runs its body only
/// while no other open holds one.
///
/// Why a compaction needs this: LMDB keeps the id of the last transaction in `lock.mdb`, which every process with the
/// store open shares and only the first of them to open resets. A compacted copy numbers its transactions afresh.
/// Swapped in while another process has the store open, that process, and this one (which reopens the store as a
/// second opener), would pick the wrong one of the file's two meta pages by the old id: they would read an empty
/// store, and the next write would build on it.
package final class StoreOpenLock: Sendable {
    private let directory: String
    /// The lock file's descriptor; -1 once released.
    private let opened: Atomic<Int32>

    /// Takes the shared lock, waiting while a compaction holds it exclusively.
    package init(directory: String) throws(LMDBError) {
        self.directory = directory
        let descriptor = try Self.openFile(directory + "/opened.lock")
        do {
            try Self.lock(descriptor, LOCK_SH, directory + "/opened.lock")
        } catch {
            close(descriptor)
            throw error
        }
        opened = Atomic(descriptor)
    }

    deinit {
        release()
    }

    /// Lets go of the shared lock: for when the store is closed.
    package func release() {
        let descriptor = opened.exchange(-1, ordering: .relaxed)
        if descriptor >= 0 { close(descriptor) }
    }

    /// Runs `body` while this is the store's only open; throws ``StoreInUseError`` without running it otherwise.
    package func withSoleOpen<R>(_ body: () throws -> R) throws -> R {
        let descriptor = opened.load(ordering: .relaxed)
        guard descriptor >= 0 else { throw LMDBError.environmentClosed(directory) }
        // One attempt at a time, across processes: a conversion of a flock lets go of the shared lock before it
        // tries for the exclusive one, and two attempts at once could each see the other's open missing.
        let attempts = try Self.openFile(directory + "/compacting.lock")
        defer { close(attempts) }
        try Self.lock(attempts, LOCK_EX, directory + "/compacting.lock")
        defer { try? Self.lock(descriptor, LOCK_SH, directory + "/opened.lock") }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            guard code == EWOULDBLOCK else { throw LMDBError(code, "flock(\(directory)/opened.lock)") }
            throw StoreInUseError(directory: directory)
        }
        return try body()
    }

    private static func openFile(_ path: String) throws(LMDBError) -> Int32 {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw LMDBError(errno, "open(\(path))") }
        return descriptor
    }

    private static func lock(_ descriptor: Int32, _ operation: Int32, _ path: String) throws(LMDBError) {
        while flock(descriptor, operation) != 0 {
            guard errno == EINTR else { throw LMDBError(errno, "flock(\(path))") }
        }
    }
}

/// A compaction refused because the store is open elsewhere: in another process, or another open in this one.
package struct StoreInUseError: Error, CustomStringConvertible {
    package let directory: String

    package var description: String {
        "\(directory) is open in another process (a chorus command such as replay or log backup, beside the server); "
            + "it is compacted once that process closes it"
    }
}
