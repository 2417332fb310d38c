import ChorusText
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Writes to empty tables that arrive in any key order, stored in key order at the end: an external sort.
///
/// A write in random key order costs a descent through the table's B-tree to a page that is rarely in the CPU's
/// cache; a write in key order (`MDB_APPEND`) goes to the last page, several times cheaper. So the writes are
/// collected into runs of at most ``runBytes``, each sorted on a thread of its own (the other core) and spilled to a
/// file beside the store, and at the end the runs are merged and appended. Memory stays flat whatever the number of
/// writes. Of several writes to one key, the last one counts, as it would have in the table.
///
/// A table can be read before the end only after ``flush(_:_:)`` has merged what was written to it so far; from then
/// on it is no longer empty, and its later writes are merged in with ordinary puts and deletes.
///
/// A write is held as its kind (1 put, 0 delete), key size (u16), value size (u32), key and value. The sorting thread
/// only ever touches `runs`, and the writer reads them only after waiting for it.
package final class KeyOrderLoad: @unchecked Sendable {
    /// The writes of one table sorted at a time: a few per table in memory at once (the one filling, the one sorting).
    package static let runBytes = 2 << 20

    private static let runPrefix = "key-order-load-"

    /// A sorted run in its file.
    private struct Run {
        package let path: String
        package let count: Int
    }

    /// Where the merged writes of a table go: a put (`value`) or a delete (nil); `append` when the table was empty
    /// before the load, so that each put can be appended.
    package typealias Sink = (
        _ table: StoreTable, _ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer?, _ append: Bool
    ) throws -> Void

    private let directory: String
    private let tables: [StoreTable]
    /// Per table (in the order of `tables`): the writes not yet handed to the sorter, back to back, and where each
    /// starts.
    private var bytes: [[UInt8]]
    private var starts: [[Int]]
    /// Per table, the sorted runs written so far, oldest first; written on the sorting thread.
    private var runs: [[Run]]
    /// The index in `tables` of each table handle, -1 for other tables.
    private var slots: [Int]
    /// Per table, whether it has been flushed, so that it is no longer empty; and whether it was written since.
    private var flushed: [Bool]
    private var writtenSinceFlush: [Bool]
    private let sorting = DispatchQueue(label: "chorus.store.key-order-load")
    private let sortingGroup = DispatchGroup()
    /// Runs handed off and not yet written: the writer waits rather than let memory grow when the sorting falls behind.
    private let waitingRuns = DispatchSemaphore(value: 4)
    private let failure = Mutex<(any Error)?>(nil)

    /// Loads `tables` (empty) through runs spilled into `directory`, after removing the runs a load that did not end
    /// (a killed process) left there.
    package init(tables: [StoreTable], spillingInto directory: String) {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        where name.hasPrefix(Self.runPrefix) && name.hasSuffix(".run") {
            unlink(directory + "/" + name)
        }
        self.directory = directory
        self.tables = tables
        bytes = tables.map { _ in [] }
        starts = tables.map { _ in [] }
        runs = tables.map { _ in [] }
        flushed = tables.map { _ in false }
        writtenSinceFlush = tables.map { _ in false }
        slots = [Int](repeating: -1, count: Int(tables.map(\.database.handle).max() ?? 0) + 1)
        for (index, table) in tables.enumerated() { slots[Int(table.database.handle)] = index }
    }

    package func put(_ value: UnsafeRawBufferPointer, for key: UnsafeRawBufferPointer, in table: StoreTable) throws {
        try add(kind: 1, key: key, value: value, to: slot(table))
    }

    package func delete(_ key: UnsafeRawBufferPointer, in table: StoreTable) throws {
        try add(kind: 0, key: key, value: UnsafeRawBufferPointer(start: nil, count: 0), to: slot(table))
    }

    private func slot(_ table: StoreTable) throws -> Int {
        let handle = Int(table.database.handle)
        guard handle < slots.count, slots[handle] >= 0 else {
            throw LMDBError(EINVAL, "\(table.name) is not being loaded")
        }
        return slots[handle]
    }

    /// Sorts what is left, merges every run of each table, and hands the surviving writes to `sink`; then removes the
    /// runs' files.
    package func finish(_ sink: Sink) throws {
        for slot in tables.indices { handOff(slot) }
        sortingGroup.wait()
        defer { for runs in runs { for run in runs { unlink(run.path) } } }
        if let error = failure.withLock({ $0 }) { throw error }
        for slot in tables.indices { try merge(runs[slot], of: slot, sink) }
    }

    /// Merges what was written to `table` so far into it through `sink`, so that it can be read. For rare reads: each
    /// waits for the sorting thread and merges everything written to the table since the last.
    package func flush(_ table: StoreTable, _ sink: Sink) throws {
        let slot = try slot(table)
        guard writtenSinceFlush[slot] else { return }
        writtenSinceFlush[slot] = false
        handOff(slot)
        sortingGroup.wait()
        if let error = failure.withLock({ $0 }) { throw error }
        let flushing = runs[slot]
        runs[slot] = []
        defer { for run in flushing { unlink(run.path) } }
        try merge(flushing, of: slot, sink)
        flushed[slot] = true
    }

    /// Removes the runs' files of a load that will not finish.
    package func abandon() {
        sortingGroup.wait()
        for runs in runs { for run in runs { unlink(run.path) } }
        runs = tables.map { _ in [] }
    }

    private func add(kind: UInt8, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, to slot: Int) throws {
        guard key.count <= Int(UInt16.max) else {
            throw LMDBError(EINVAL, "a key of \(key.count) bytes for \(tables[slot].name)")
        }
        writtenSinceFlush[slot] = true
        starts[slot].append(bytes[slot].count)
        bytes[slot].append(kind)
        withUnsafeBytes(of: UInt16(key.count).littleEndian) { bytes[slot].append(contentsOf: $0) }
        withUnsafeBytes(of: UInt32(value.count).littleEndian) { bytes[slot].append(contentsOf: $0) }
        bytes[slot].append(contentsOf: key)
        bytes[slot].append(contentsOf: value)
        if bytes[slot].count >= Self.runBytes { handOff(slot) }
    }

    /// Hands the table's buffered writes to the sorting thread, which sorts them into a run.
    private func handOff(_ slot: Int) {
        guard !starts[slot].isEmpty else { return }
        let (bytes, starts) = (self.bytes[slot], self.starts[slot])
        self.bytes[slot] = []
        self.starts[slot] = []
        let path = directory + "/" + Self.runPrefix + UUID().uuidString.lowercased() + ".run"
        waitingRuns.wait()
        sorting.async(group: sortingGroup) { [self] in
            defer { waitingRuns.signal() }
            do {
                try Self.writeRun(bytes, starts, to: path)
                runs[slot].append(Run(path: path, count: starts.count))
            } catch {
                failure.withLock { $0 = $0 ?? error }
            }
        }
    }

    /// Writes the records in key order; of equal keys, the latest first.
    private static func writeRun(_ bytes: [UInt8], _ starts: [Int], to path: String) throws {
        try bytes.withUnsafeBytes { bytes in
            let order = starts.sorted { left, right in
                let comparison = KeyOrder.compare(
                    RunRecord.key(in: bytes, at: left), RunRecord.key(in: bytes, at: right))
                // Of equal keys, the latest write first: the merge keeps the first it sees.
                return comparison != 0 ? comparison < 0 : left > right
            }
            // Copied into one buffer in key order and written at once: a write per record cost more than the sort.
            var sorted = [UInt8]()
            sorted.reserveCapacity(bytes.count)
            for start in order {
                let sizes = RunRecord.sizes(in: bytes, at: start)
                let end = start + RunRecord.headerSize + sizes.key + sizes.value
                sorted.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
            }
            let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else { throw LMDBError(errno, "open(\(path))") }
            defer { close(descriptor) }
            try sorted.withUnsafeBytes { sorted in
                var written = 0
                while written < sorted.count {
                    let count = write(descriptor, sorted.baseAddress! + written, sorted.count - written)
                    if count < 0, errno == EINTR { continue }
                    guard count > 0 else { throw LMDBError(errno, "write(\(path))") }
                    written += count
                }
            }
        }
    }

    /// Merges the runs of one table, oldest first, and hands each key's last write to `sink`: every put, and the
    /// deletes once the table is no longer empty (until then a delete only cancels earlier writes of the load).
    private func merge(_ runs: [Run], of slot: Int, _ sink: Sink) throws {
        let (table, append) = (tables[slot], !flushed[slot])
        var mappings: [RunMapping] = []
        defer { for mapping in mappings { mapping.unmap() } }
        for run in runs { mappings.append(try RunMapping(path: run.path)) }
        var readers = try zip(mappings, runs).map { try RunReader(mapping: $0, count: $1.count) }
        // A heap of the readers that have a record, smallest key first; of equal keys, the newest run first, whose
        // write to the key is the last.
        func precedes(_ left: Int, _ right: Int) -> Bool {
            let comparison = readers[left].compareKey(with: readers[right].key)
            return comparison != 0 ? comparison < 0 : left > right
        }
        var heap = readers.indices.filter { readers[$0].hasRecord }
        func siftDown(_ start: Int) {
            var parent = start
            while true {
                let left = 2 * parent + 1
                let right = left + 1
                var first = parent
                if left < heap.count, precedes(heap[left], heap[first]) { first = left }
                if right < heap.count, precedes(heap[right], heap[first]) { first = right }
                guard first != parent else { return }
                heap.swapAt(parent, first)
                parent = first
            }
        }
        for index in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(index) }
        // Keys stay where they are mapped until the readers go, so the last one is remembered in place.
        var lastKey: UnsafeRawBufferPointer?
        while let top = heap.first {
            // The first write seen of a key is its last one (newest run, and last within it: see writeRun).
            let isNewKey = lastKey.map { readers[top].compareKey(with: $0) != 0 } ?? true
            if isNewKey {
                let reader = readers[top]
                lastKey = reader.key
                if reader.kind == 1 {
                    try sink(table, reader.key, reader.value, append)
                } else if !append {
                    try sink(table, reader.key, nil, false)
                }
            }
            try readers[top].advance()
            if readers[top].hasRecord {
                siftDown(0)
            } else {
                heap.swapAt(0, heap.count - 1)
                heap.removeLast()
                siftDown(0)
            }
        }
    }
}

/// A write as a load holds it, in memory and in a run's file: its kind (1 put, 0 delete), key size (u16), value size
/// (u32), key and value.
private enum RunRecord {
    package static let headerSize = 7

    /// The sizes of the key and value of the record at `start`, whose header `bytes` holds whole.
    package static func sizes(in bytes: UnsafeRawBufferPointer, at start: Int) -> (key: Int, value: Int) {
        (
            Int(UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: start + 1, as: UInt16.self))),
            Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: start + 3, as: UInt32.self)))
        )
    }

    /// The key of the record at `start`, which `bytes` holds whole.
    package static func key(in bytes: UnsafeRawBufferPointer, at start: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(
            rebasing: bytes[(start + headerSize)..<(start + headerSize + sizes(in: bytes, at: start).key)])
    }

}

/// A run's file, mapped for reading: it was written moments ago, so it is in the page cache. Unmapped by the merge
/// that maps it.
private struct RunMapping {
    package let base: UnsafeRawPointer?
    package let size: Int

    package init(path: String) throws {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw LMDBError(errno, "open(\(path))") }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw LMDBError(errno, "fstat(\(path))") }
        size = Int(status.st_size)
        guard size > 0 else {
            base = nil
            return
        }
        guard let mapped = mmap(nil, size, PROT_READ, MAP_PRIVATE, descriptor, 0), mapped != MAP_FAILED else {
            throw LMDBError(errno, "mmap(\(path))")
        }
        madvise(mapped, size, MADV_SEQUENTIAL)
        base = UnsafeRawPointer(mapped)
    }

    package func unmap() {
        if let base { munmap(UnsafeMutableRawPointer(mutating: base), size) }
    }
}

/// Reads a mapped run's records in order where they lie, handing out each key and value in place: reading them
/// through `fread` calls took most of a merge's time. A value of pointers, so that moving through a merge's heap costs
/// no reference counting.
private struct RunReader {
    private let base: UnsafeRawPointer?
    private let size: Int
    private var offset = 0
    private var remaining: Int
    private(set) var hasRecord = false
    private(set) var kind: UInt8 = 0
    /// The current record's key and value, valid while the mapping is.
    private(set) var key = UnsafeRawBufferPointer(start: nil, count: 0)
    private(set) var value = UnsafeRawBufferPointer(start: nil, count: 0)

    package init(mapping: RunMapping, count: Int) throws {
        base = mapping.base
        size = mapping.size
        remaining = count
        try advance()
    }

    package mutating func advance() throws {
        guard remaining > 0 else {
            hasRecord = false
            return
        }
        remaining -= 1
        guard let base, offset + RunRecord.headerSize <= size else {
            throw LMDBError(EIO, "a run of a key-order load ends early")
        }
        kind = base.load(fromByteOffset: offset, as: UInt8.self)
        let (keyCount, valueCount) = RunRecord.sizes(in: UnsafeRawBufferPointer(start: base, count: size), at: offset)
        let keyStart = offset + RunRecord.headerSize
        guard keyStart + keyCount + valueCount <= size else {
            throw LMDBError(EIO, "a run of a key-order load ends early")
        }
        key = UnsafeRawBufferPointer(start: base + keyStart, count: keyCount)
        value = UnsafeRawBufferPointer(start: base + keyStart + keyCount, count: valueCount)
        offset = keyStart + keyCount + valueCount
        hasRecord = true
    }

    /// Compares the current key with `other`.
    package func compareKey(with other: UnsafeRawBufferPointer) -> Int32 { KeyOrder.compare(key, other) }
}
