import CFileCalls
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Disk blocks allocated ahead of the pages an environment is about to fill, so that a full disk refuses a write
/// transaction with ENOSPC before it starts.
///
/// Two kinds of environment need it. With `MDB_WRITEMAP` LMDB fills new pages through the map, in a file it has made
/// sparse: a page the file system has no room for kills the process with SIGBUS, where an ordinary write fails with
/// ENOSPC. A bulk import writes through copies, but LMDB reports a commit's write that came short, as on a full disk,
/// as an input/output error (EIO), which says nothing of the disk. So before each write transaction the file's blocks
/// are allocated past the last used page, without changing the file's size (`fallocate`). When the disk cannot give
/// them, the transaction is refused with ENOSPC before it touches the file, and the next one succeeds once space is
/// freed.
///
/// The space kept is a quarter of what the store uses, at least 8 MiB, topped up once less than half is left: far
/// more than one batch of the read models writes. A build, or the index an import writes at its end, one transaction
/// into empty tables, reserves its estimated size first (``allocate(through:mapSize:)``); a transaction that outgrew
/// the space kept could still meet a full disk.
package final class DiskBlockReservation: Sendable {
    private let descriptor: Int32
    /// Whether the file is a map written in place, which must have its blocks.
    private let writesInPlace: Bool
    /// The end of the blocks allocated so far, in bytes from the start of the file.
    private let reservedThrough = Mutex(0)

    package init(descriptor: Int32, writesInPlace: Bool) {
        self.descriptor = descriptor
        self.writesInPlace = writesInPlace
    }

    package static func target(used: Int) -> Int { max(used / 4, 8 << 20) }

    /// Makes sure blocks are allocated well past `used` bytes, the pages LMDB uses; never past the map.
    package func ensure(used: Int, mapSize: Int) throws(LMDBError) {
        let target = Self.target(used: used)
        guard reservedThrough.withLock({ $0 }) - used < target / 2 else { return }
        try allocate(through: used + target, mapSize: mapSize)
    }

    /// Allocates the file's blocks up to `end` bytes, or the end of the map if that comes first.
    package func allocate(through end: Int, mapSize: Int) throws(LMDBError) {
        let end = min(end, mapSize)
        let start = reservedThrough.withLock { $0 }
        guard end > start else { return }
        // Blocks already allocated are skipped by the file system; this is cheap past the first call.
        var code = chorus_allocate_keeping_size(descriptor, Int64(start), Int64(end - start))
        if code == EOPNOTSUPP {
            // A map written in place has the map's size, so the C library's fallback, which writes zeros, stays in
            // the file. A file written through copies goes without: its writes fail, only less clearly.
            code = writesInPlace ? posix_fallocate(descriptor, off_t(start), off_t(end - start)) : 0
        }
        guard code == 0 else {
            throw LMDBError(
                code, "fallocate: reserving disk space for the next \(end - start) bytes of the store")
        }
        reservedThrough.withLock { $0 = max($0, end) }
    }

    /// Frees the blocks allocated past the end of a file written through copies, as its environment closes: they
    /// would stay allocated, unseen by `ls`, until the file is truncated. Truncating it to its own size does that
    /// (ext4 drops blocks past the end then; punching a hole past the end does nothing there). A map written in
    /// place has the map's size, and keeps its blocks.
    package func releaseUnused() {
        var status = stat()
        guard !writesInPlace, reservedThrough.withLock({ $0 }) > 0, fstat(descriptor, &status) == 0 else { return }
        // Not freed is not an error: the space is used as the file grows.
        _ = ftruncate(descriptor, status.st_size)
    }
}
