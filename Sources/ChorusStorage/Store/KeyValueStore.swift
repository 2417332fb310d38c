import Foundation
import Logging

/// How a ``KeyValueStore`` is opened.
package struct KeyValueStoreConfiguration: Sendable {
    /// The map to start with; it doubles when full, by at most ``maximumMapGrowthStep``.
    package var initialMapSize: Int = 256 << 20
    package var maximumMapGrowthStep: Int = 4 << 30
    package var maximumMapSize: Int = 1 << 40
    package var maximumReaders: UInt32 = 1024
    package var readOnly = false
    /// Faster large transactions, at the price of LMDB's protection against stray writes through pointers into the
    /// map (`MDB_WRITEMAP`): for stores that can be rebuilt from the log, such as the read models. The file's disk
    /// blocks are allocated ahead of each write, so that a full disk fails it with ENOSPC (see DiskBlockReservation).
    package var writesInPlace = false

    package init() {}
}

/// Named key-value tables in one LMDB environment of their own, with transactions that exist only inside
/// synchronous closures. Read transactions see one committed state of every table; write transactions are serialised
/// by LMDB. The projections keep their read models in one of these.
package final class KeyValueStore: Sendable {
    package let directory: String
    private let environment: LMDBEnvironment

    /// Opens (creating if needed, unless read-only) the store in `directory` with `tables`. A table must be opened
    /// with the layout it was created with.
    package init(
        directory: String, tables: [StoreTableDefinition],
        configuration: KeyValueStoreConfiguration = KeyValueStoreConfiguration(),
        logger: Logger = Logger(label: "chorus.store")
    ) throws {
        self.directory = directory
        environment = try LMDBEnvironment(
            path: directory,
            configuration: .init(
                initialMapSize: configuration.initialMapSize, maximumMapGrowthStep: configuration.maximumMapGrowthStep,
                maximumMapSize: configuration.maximumMapSize, maximumReaders: configuration.maximumReaders,
                readOnly: configuration.readOnly, preparesFileSpace: false, writeMap: configuration.writesInPlace),
            databases: tables.map(\.lmdbDefinition), logger: logger)
    }

    deinit {
        environment.close()
    }

    /// The table opened under `name`; asking for a table not given at open is a programming error.
    package func table(_ name: String) -> StoreTable {
        StoreTable(database: environment.database(name))
    }

    /// The table opened with `definition`.
    package func table(_ definition: StoreTableDefinition) -> StoreTable { table(definition.name) }

    /// Runs `body`, typically one large write, while a thread of its own faults in up to `bytes` of the map past its
    /// last used page, so that the writer does not wait for the kernel to zero the pages it fills. For stores that
    /// write in place (``KeyValueStoreConfiguration/writesInPlace``); others just run `body`.
    package func whilePrefaulting<R>(bytes: Int, _ body: () throws -> R) throws -> R {
        try environment.whilePrefaulting(bytes: bytes, body)
    }

    /// Runs `body` in a read-only transaction.
    package func read<R>(_ body: (StoreTransaction) throws -> R) throws -> R {
        try environment.read { try body(StoreTransaction($0)) }
    }

    /// Runs `body` in a write transaction and commits it; `durable: false` skips the fsync. When the map fills,
    /// `body` runs again from the start after the map grows, so it must keep its effects inside the transaction.
    package func write<R>(durable: Bool = true, _ body: (StoreTransaction) throws -> R) throws -> R {
        try environment.write(durable: durable) { try body(StoreTransaction($0)) }
    }

    /// Forces everything committed to disk.
    package func sync() throws { try environment.sync() }

    /// Waits for open transactions, then closes the files; later transactions fail.
    package func close() { environment.close() }
}

extension KeyValueStore {
    /// Writes a compacted copy of the store, as one read transaction sees it, into the empty directory `destination`
    /// (LMDB's compacting copy: free pages left out, and of each page only what it holds).
    package func copyCompacted(to destination: String) throws {
        try environment.copyCompacted(to: destination)
    }
}
