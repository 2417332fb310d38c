import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Disk blocks allocated ahead of the pages an `MDB_WRITEMAP` environment is about to fill.
///
/// With `MDB_WRITEMAP` LMDB fills new pages through the map, in a file it has made sparse: a page the file system has
/// no room for kills the process with SIGBUS, where an ordinary write fails with ENOSPC. So before each write
/// transaction the file's blocks are allocated (`posix_fallocate`) past the last used page. When the disk cannot give
/// them, the transaction is refused with ENOSPC before it touches the map, and the next one succeeds once space is
/// freed.
///
/// The space kept is a quarter of what the store uses, at least 8 MiB, topped up once less than half is left: far
/// more than one batch of the read models writes. A build, one transaction from an empty store, reserves its
/// estimated size first (``allocate(through:mapSize:)``); a transaction that outgrew the space kept could still meet
/// a full disk.
package final class MapFileReservation: Sendable {
    private let descriptor: Int32
    /// The end of the blocks allocated so far, in bytes from the start of the file.
    private let reservedThrough = Mutex(0)

    package init(descriptor: Int32) { self.descriptor = descriptor }

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
        let code = posix_fallocate(descriptor, off_t(start), off_t(end - start))
        guard code == 0 else {
            throw LMDBError(
                code, "posix_fallocate: reserving disk space for the next \(end - start) bytes of the store")
        }
        reservedThrough.withLock { $0 = max($0, end) }
    }
}
