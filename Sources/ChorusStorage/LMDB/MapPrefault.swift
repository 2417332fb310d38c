import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Faults in the pages of a data file's map (`MDB_WRITEMAP`) past its last used page, on a thread of its own, ahead of
/// a large write transaction that is about to fill them.
///
/// A page of the file that was never written is a hole: the first touch through the map makes the kernel read it,
/// that is, zero a page of page cache (with readahead, a large folio at a time). On the virtual machines Chorus is
/// measured on that is a large part of a rebuild, all of it on the writer's thread. Touched here first
/// (`MADV_POPULATE_READ`, Linux 5.14), the pages are ready when the writer comes, which only marks them written. They
/// are the file's own pages, so what the writer does not use costs page cache, not disk. Elsewhere this does nothing.
package enum MapPrefault {
    /// Faulted in at a time, while the map cannot move.
    package static let chunk = 4 << 20
    /// `MADV_POPULATE_READ` (Linux 5.14), which the C library's headers here do not name.
    private static let populateRead: Int32 = 22

    /// Runs `body` while a thread of its own faults in bytes `start..<end` of the file mapped from `file`, and stops
    /// that thread when `body` returns. `whileMapped` runs its body while the map cannot move, handing it how many
    /// times the map was set anew (each time, it may have moved), or returns false once the environment is closed.
    package static func whileFaultingIn<R>(
        file: String, from start: Int, to end: Int, whileMapped: @escaping @Sendable ((Int) -> Void) -> Bool,
        _ body: () throws -> R
    ) rethrows -> R {
        let stopping = Atomic<Bool>(false)
        let finished = DispatchSemaphore(value: 0)
        let thread = Thread {
            setCurrentThreadName("chorus-prefault")
            var offset = start - start % chunk
            // Where the map is, found again only once it was resized (and may have moved): read for every chunk,
            // `/proc/self/maps` took 51 of this thread's 230 samples in an import's end.
            var found: (remaps: Int, map: (base: UnsafeMutableRawPointer, count: Int)?)?
            while offset < end, !stopping.load(ordering: .relaxed) {
                var mapped = true
                let open = whileMapped { remaps in
                    if found?.remaps != remaps { found = (remaps, mapping(of: file)) }
                    guard let map = found?.map, offset < map.count else {
                        mapped = false
                        return
                    }
                    #if os(Linux)
                    mapped = madvise(map.base + offset, min(chunk, map.count - offset), populateRead) == 0
                    #else
                    mapped = false
                    #endif
                }
                guard open, mapped else { break }
                offset += chunk
            }
            finished.signal()
        }
        thread.start()
        defer {
            stopping.store(true, ordering: .relaxed)
            finished.wait()
        }
        return try body()
    }

    /// Where this process maps `file` whole, from `/proc/self/maps` (LMDB does not say where its map is).
    private static func mapping(of file: String) -> (base: UnsafeMutableRawPointer, count: Int)? {
        // Read to the end: procfs files have no size for Foundation to go by.
        guard let handle = FileHandle(forReadingAtPath: "/proc/self/maps") else { return nil }
        defer { try? handle.close() }
        let maps = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        for line in maps.split(separator: "\n") where line.hasSuffix(" " + file) {
            // start-end perms offset device inode path
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            let bounds = fields[0].split(separator: "-")
            guard fields.count >= 6, fields[2] == "00000000", bounds.count == 2,
                let low = UInt(bounds[0], radix: 16), let high = UInt(bounds[1], radix: 16),
                let base = UnsafeMutableRawPointer(bitPattern: low)
            else { continue }
            return (base, Int(high - low))
        }
        return nil
    }
}
