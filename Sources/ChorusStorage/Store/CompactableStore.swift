import Foundation
import Logging
import Synchronization

/// A ``KeyValueStore`` that can be compacted in place while the process uses it: for the small stores that hold a
/// user's personal data (the data keys, the stored responses, the webhook outbox), whose freed pages LMDB reuses
/// without zeroing. ``compact()`` copies the store with LMDB's compacting copy, which leaves free pages out and copies
/// of each page only what it holds, then swaps the copy's file in for the store's. Transactions wait during the swap.
///
/// The swap renames the copy's `data.mdb` over the store's, so a crash at any moment leaves one or the other whole;
/// a copy a crash left behind is removed at the next open. A store open anywhere else (another process, or another
/// open in this one) is not compacted: ``compact()`` throws ``StoreInUseError`` (see ``StoreOpenLock``).
package final class CompactableStore: Sendable {
    package let directory: String
    private let tables: [StoreTableDefinition]
    private let logger: Logger
    /// Shared by transactions, exclusive while the file is swapped.
    private let swapLock = ReadWriteLock()
    private let current: Mutex<KeyValueStore>
    private let openLock: StoreOpenLock

    package init(directory: String, tables: [StoreTableDefinition], logger: Logger = Logger(label: "chorus.store"))
        throws
    {
        self.directory = directory
        self.tables = tables
        self.logger = logger
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        // Taken before LMDB opens the store: a compaction elsewhere holds it until its copy is swapped in.
        openLock = try StoreOpenLock(directory: directory)
        try? FileManager.default.removeItem(atPath: Self.copyDirectory(of: directory))
        current = Mutex(try KeyValueStore(directory: directory, tables: tables, logger: logger))
    }

    private static func copyDirectory(of directory: String) -> String { directory + ".compacting" }

    private var store: KeyValueStore { current.withLock { $0 } }

    package func table(_ name: String) -> StoreTable { store.table(name) }

    package func read<R>(_ body: (StoreTransaction) throws -> R) throws -> R {
        try swapLock.withSharedLock { try store.read(body) }
    }

    package func write<R>(durable: Bool = true, _ body: (StoreTransaction) throws -> R) throws -> R {
        try swapLock.withSharedLock { try store.write(durable: durable, body) }
    }

    /// Copies the store compacted and swaps the copy in; returns the bytes of the file before and after.
    @discardableResult
    package func compact() throws -> (before: Int, after: Int) {
        try swapLock.withExclusiveLock { try openLock.withSoleOpen { try swap() } }
    }

    private func swap() throws -> (before: Int, after: Int) {
        let files = FileManager.default
        let copy = Self.copyDirectory(of: directory)
        try? files.removeItem(atPath: copy)
        try files.createDirectory(atPath: copy, withIntermediateDirectories: true)
        defer { try? files.removeItem(atPath: copy) }
        let old = store
        try old.copyCompacted(to: copy)
        let before = Self.fileSize(directory + "/data.mdb")
        let after = Self.fileSize(copy + "/data.mdb")
        try Self.syncFile(copy + "/data.mdb")
        old.close()
        // The store reopens whichever file the rename left, even if it failed.
        let swapped = Result { try AtomicFile.commit(copy + "/data.mdb", as: directory + "/data.mdb") }
        let reopened = try KeyValueStore(directory: directory, tables: tables, logger: logger)
        current.withLock { $0 = reopened }
        try swapped.get()
        return (before, after)
    }

    /// Writes a compacted copy of the store into the empty directory `destination`.
    package func copyCompacted(to destination: String) throws {
        try swapLock.withSharedLock { try store.copyCompacted(to: destination) }
    }

    package func sync() throws { try swapLock.withSharedLock { try store.sync() } }

    package func close() {
        swapLock.withExclusiveLock {
            store.close()
            openLock.release()
        }
    }

    private static func fileSize(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
    }

    /// fsyncs the copy before it is renamed over the store's file.
    private static func syncFile(_ path: String) throws {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { Foundation.close(descriptor) }
        guard fsync(descriptor) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }
}
