import CLMDB
import Foundation
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Keeps zero-filled, synced space ahead of the last page LMDB uses in its data file.
///
/// LMDB (without `MDB_WRITEMAP`) grows its file by writing past the end. On ext4 and most journaling file systems, an
/// `fdatasync` after a write that extended the file must also commit the file system's journal; a write into space
/// already allocated and written is a plain overwrite; a group commit of 64 events is about a quarter faster when it
/// does not extend the file. So a background thread writes zeros past the end of the file a chunk at a time, between
/// write transactions (``withFileLock(_:)``), and syncs them outside the lock; commits then only overwrite (while
/// ``run()`` runs: the log runs it beside its writer). LMDB ignores bytes past its last page, and never truncates its
/// file in this mode.
///
/// The space kept ready is a quarter of what LMDB uses, between 1 and 64 MiB, so a small log stays small, and the file
/// never grows past the map's maximum size.
package final class DataFileHeadroom: @unchecked Sendable {
    /// Written under the file lock in one go, so the writer waits at most for this much.
    package static let chunk = 1 << 20
    /// How often the space is checked, in seconds: a busy log uses about 1 MiB in 30 ms.
    package static let pollInterval = 0.01

    /// How much prepared space to keep for a file of which LMDB uses `used` bytes.
    package static func target(used: Int) -> Int { min(max(used / 4, 1 << 20), 64 << 20) }

    private let descriptor: Int32
    private let maximumFileSize: Int
    /// The bytes LMDB uses, read safely: the meta pages it is read from live in the map, which a resize moves.
    private let usedBytes: @Sendable () throws -> Int
    private let logger: Logger
    /// Held by every write transaction, and by the extension while it writes.
    private let fileLock = NSLock()
    private let wakeUp = NSCondition()
    private let isStopping = Atomic<Bool>(false)
    /// Whether ``run()`` has started its thread, or ``stop()`` came first: one of them decides, under the lock.
    private let phase = Mutex<Phase>(.idle)
    private enum Phase { case idle, running, stopped }
    private let finished = DispatchSemaphore(value: 0)

    package init(
        descriptor: Int32, maximumFileSize: Int, usedBytes: @escaping @Sendable () throws -> Int, logger: Logger
    ) {
        self.descriptor = descriptor
        self.maximumFileSize = maximumFileSize
        self.usedBytes = usedBytes
        self.logger = logger
    }

    /// Prepares space, on a thread of its own, until ``stop()``; returns at once if stopped already.
    package func run() async {
        let starts = phase.withLock { phase in
            guard phase == .idle else { return false }
            phase = .running
            return true
        }
        guard starts else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let thread = Thread { [self] in
                setCurrentThreadName("chorus-log-headroom")
                prepareUntilStopped()
                finished.signal()
                continuation.resume()
            }
            thread.start()
        }
    }

    /// Runs `body` (a write transaction) while no extension is being written.
    package func withFileLock<R>(_ body: () throws -> R) rethrows -> R {
        fileLock.lock()
        defer { fileLock.unlock() }
        return try body()
    }

    /// Ends ``run()``'s thread, if it runs, and waits for it; call before the environment closes. Idempotent.
    package func stop() {
        let wasRunning = phase.withLock { phase in
            defer { phase = .stopped }
            return phase == .running
        }
        guard !isStopping.exchange(true, ordering: .relaxed) else { return }
        wakeUp.lock()
        wakeUp.signal()
        wakeUp.unlock()
        if wasRunning { finished.wait() }
    }

    private func prepareUntilStopped() {
        dropUnwrittenTail()
        let zeros = [UInt8](repeating: 0, count: Self.chunk)
        while true {
            // Look every few milliseconds (nothing is added to the commits themselves), and act only once the prepared
            // space is down to half its target: filling it back up after every look would keep the disk busy.
            wakeUp.lock()
            while !isStopping.load(ordering: .relaxed), let space = try? space(),
                space.prepared >= Self.target(used: space.used) / 2
            {
                _ = wakeUp.wait(until: Date(timeIntervalSinceNow: Self.pollInterval))
            }
            wakeUp.unlock()
            guard !isStopping.load(ordering: .relaxed) else { return }
            do {
                var space = try space()
                while !isStopping.load(ordering: .relaxed), space.prepared < Self.target(used: space.used),
                    space.used + space.prepared + Self.chunk <= maximumFileSize
                {
                    try extendByOneChunk(zeros)
                    space = try self.space()
                }
                guard fdatasync(descriptor) == 0 else { throw LMDBError(errno, "fdatasync(headroom)") }
            } catch {
                // Without headroom, commits are only slower (a full disk is reported by the commits themselves);
                // say so, and try again later.
                logger.warning("could not prepare space in the log file", metadata: ["error": "\(error)"])
                wakeUp.lock()
                _ = wakeUp.wait(until: Date(timeIntervalSinceNow: 5))
                wakeUp.unlock()
            }
        }
    }

    /// Cuts the file back to the pages LMDB uses when its end was never written: bulk imports by earlier versions
    /// wrote in place (`MDB_WRITEMAP`), and LMDB then sizes the file to its map at once, without allocating it. That
    /// space would count as prepared here, and it is not.
    private func dropUnwrittenTail() {
        withFileLock {
            var status = stat()
            guard fstat(descriptor, &status) == 0, let used = try? usedBytes(), Int(status.st_size) > used,
                Int(status.st_blocks) * 512 < Int(status.st_size)
            else { return }
            if ftruncate(descriptor, off_t(used)) != 0 {
                logger.warning(
                    "could not cut the log file's unwritten end",
                    metadata: ["error": "\(String(cString: strerror(errno)))"])
            }
        }
    }

    /// Bytes LMDB uses, and bytes of file past its last used page.
    private func space() throws -> (used: Int, prepared: Int) {
        let used = try usedBytes()
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw LMDBError(errno, "fstat(log data file)") }
        return (used, Int(status.st_size) - used)
    }

    private func extendByOneChunk(_ zeros: [UInt8]) throws {
        try withFileLock {
            // Between transactions every page LMDB uses is written, so the end of the file is past all of them.
            var status = stat()
            guard fstat(descriptor, &status) == 0 else { throw LMDBError(errno, "fstat(log data file)") }
            let written = zeros.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, status.st_size) }
            guard written == zeros.count else { throw LMDBError(written < 0 ? errno : ENOSPC, "pwrite(headroom)") }
        }
    }
}
