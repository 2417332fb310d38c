import CLMDB
import Foundation
import Logging
import Synchronization

/// One LMDB environment, opened once per process with `MDB_NOTLS`, with its named databases opened once.
///
/// Transactions exist only inside the synchronous closures of ``read(_:)`` and ``write(durable:_:)``, so none
/// can cross an `await`. The map grows by itself on `MDB_MAP_FULL` and adopts a size grown by another process.
package final class LMDBEnvironment: @unchecked Sendable {
    /// The longest key LMDB takes: its compile-time `MDB_MAXKEYSIZE`, 511 as Debian's liblmdb is built.
    package static let maximumKeySize = 511

    /// How the environment is opened and how its map grows.
    package struct Configuration: Sendable {
        /// The map size to open with; LMDB's file is sparse, so a large map costs address space, not disk.
        package var initialMapSize: Int
        /// Each growth adds the current size (doubling) but never more than this.
        package var maximumMapGrowthStep: Int
        /// The map never grows past this; a write that needs more fails with `MDB_MAP_FULL`.
        package var maximumMapSize: Int
        package var maximumReaders: UInt32
        /// Opens existing databases without creating any, and never writes.
        package var readOnly: Bool
        /// Keeps zero-filled space ready past the last page (see ``DataFileHeadroom``): for latency-bound commits.
        package var preparesFileSpace: Bool
        /// `MDB_WRITEMAP`: write transactions change pages in the map itself, with no dirty-page copies to search.
        /// Much faster for large transactions, and their memory is the file's; but a stray write through a pointer
        /// into the map corrupts the database, so only for stores that can be rebuilt.
        package var writeMap: Bool = false
        /// Starts the disk's write-back of pages that commits without a sync left dirty, as the file grows (see
        /// ``DataFileWriteBack``): for a bulk import, whose closing sync then has little left to write.
        package var startsWriteBack: Bool = false
        /// Allocates the file's disk blocks ahead of each write transaction, so that a full disk refuses it with ENOSPC
        /// before it starts (see ``DiskBlockReservation``); always done with ``writeMap``.
        package var reservesDiskBlocks: Bool = false

        package init(
            initialMapSize: Int, maximumMapGrowthStep: Int, maximumMapSize: Int, maximumReaders: UInt32, readOnly: Bool,
            preparesFileSpace: Bool, writeMap: Bool = false, startsWriteBack: Bool = false,
            reservesDiskBlocks: Bool = false
        ) {
            self.initialMapSize = initialMapSize
            self.maximumMapGrowthStep = maximumMapGrowthStep
            self.maximumMapSize = maximumMapSize
            self.maximumReaders = maximumReaders
            self.readOnly = readOnly
            self.preparesFileSpace = preparesFileSpace
            self.writeMap = writeMap
            self.startsWriteBack = startsWriteBack
            self.reservesDiskBlocks = reservesDiskBlocks
        }
    }

    package let path: String
    private let handle: OpaquePointer
    private let databases: [String: LMDBDatabase]
    /// LMDB's unnamed database, which also holds one record per named database.
    package let mainDatabase: LMDBDatabase
    private let configuration: Configuration
    private let logger: Logger
    /// Held shared by every transaction and exclusively while the map is resized (LMDB's rule).
    private let resizeLock = ReadWriteLock()
    private let currentMapSize: Atomic<Int>
    private let growths = Atomic<Int>(0)
    /// How many times the map was set anew (grown here or elsewhere): where it is may have changed each time.
    private let remaps = Atomic<Int>(0)
    /// Set under the exclusive side of `resizeLock`, read under either side.
    private var isClosed = false
    /// Held for each whole write, so that the environment-wide `MDB_NOSYNC` a non-durable write sets for its own
    /// commit can never reach another one. (LMDB serialises write transactions too, but releases them at commit.)
    private let writeSerializer = NSLock()
    /// Prepares file space ahead of LMDB's writes; nil when read-only. Set once, at the end of `init`.
    private var headroom: DataFileHeadroom?
    /// Allocates disk blocks ahead of the pages LMDB fills (see ``DiskBlockReservation``); nil unless written in
    /// place or ``Configuration/reservesDiskBlocks``. Set once, at the end of `init`, with `pageSize`.
    private var reservation: DiskBlockReservation?
    private var writeBack: DataFileWriteBack?
    private var pageSize = 0

    /// One named database to open, with its `mdb_dbi_open` flags (such as `MDB_DUPSORT`) besides `MDB_CREATE`.
    package struct DatabaseDefinition {
        package var name: String
        package var flags: UInt32 = 0

        package init(name: String, flags: UInt32 = 0) {
            self.name = name
            self.flags = flags
        }
    }

    package init(
        path: String, configuration: Configuration, databases definitions: [DatabaseDefinition], logger: Logger
    ) throws {
        self.path = path
        self.configuration = configuration
        self.logger = logger
        if !configuration.readOnly {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }

        let environment = try Self.openEnvironment(at: path, configuration, databaseCount: definitions.count)
        self.handle = environment

        // Slots left behind by processes that died mid-read would pin old pages forever.
        var staleReaders: Int32 = 0
        mdb_reader_check(environment, &staleReaders)
        if staleReaders > 0 {
            logger.notice("cleared stale LMDB readers", metadata: ["path": "\(path)", "count": "\(staleReaders)"])
        }

        var info = MDB_envinfo()
        mdb_env_info(environment, &info)
        self.currentMapSize = Atomic(info.me_mapsize)

        let (opened, main): ([String: LMDBDatabase], MDB_dbi)
        do {
            (opened, main) = try Self.openDatabases(definitions, in: environment, readOnly: configuration.readOnly)
        } catch {
            mdb_env_close(environment)
            throw error
        }
        self.databases = opened
        self.mainDatabase = LMDBDatabase(name: "main", handle: main)
        if !configuration.readOnly,
            configuration.preparesFileSpace || configuration.writeMap || configuration.startsWriteBack
                || configuration.reservesDiskBlocks
        {
            var descriptor: Int32 = -1
            var stat = MDB_stat()
            do {
                try LMDBError.check(mdb_env_get_fd(environment, &descriptor), "mdb_env_get_fd")
                try LMDBError.check(mdb_env_stat(environment, &stat), "mdb_env_stat")
            } catch {
                mdb_env_close(environment)
                throw error
            }
            let pageSize = Int(stat.ms_psize)
            self.pageSize = pageSize
            if configuration.writeMap || configuration.reservesDiskBlocks {
                reservation = DiskBlockReservation(descriptor: descriptor, writesInPlace: configuration.writeMap)
            }
            if configuration.startsWriteBack { writeBack = DataFileWriteBack(descriptor: descriptor) }
            if configuration.preparesFileSpace {
                // Its loop (``prepareFileSpace()``) ends in close and deinit, before the environment does.
                headroom = DataFileHeadroom(
                    descriptor: descriptor, maximumFileSize: configuration.maximumMapSize,
                    usedBytes: { [unowned self] in try self.usedPages() * pageSize }, logger: logger)
            }
        }
    }

    /// Creates and opens the environment: a handle the caller closes.
    private static func openEnvironment(at path: String, _ configuration: Configuration, databaseCount: Int) throws
        -> OpaquePointer
    {
        var environment: OpaquePointer?
        try LMDBError.check(mdb_env_create(&environment), "mdb_env_create(\(path))")
        guard let environment else { throw LMDBError(MDB_PANIC, "mdb_env_create(\(path)) returned no handle") }
        do {
            // One slot more than the definitions: for dropping a database an older format had
            // (``LMDBWriteTransaction/dropDatabase(named:)``).
            try LMDBError.check(
                mdb_env_set_maxdbs(environment, MDB_dbi(databaseCount + 1)), "mdb_env_set_maxdbs")
            try LMDBError.check(
                mdb_env_set_maxreaders(environment, configuration.maximumReaders), "mdb_env_set_maxreaders")
            try LMDBError.check(mdb_env_set_mapsize(environment, configuration.initialMapSize), "mdb_env_set_mapsize")
            let flags =
                UInt32(MDB_NOTLS) | (configuration.readOnly ? UInt32(MDB_RDONLY) : 0)
                | (configuration.writeMap && !configuration.readOnly ? UInt32(MDB_WRITEMAP) : 0)
            try LMDBError.check(mdb_env_open(environment, path, flags, 0o644), "mdb_env_open(\(path))")
        } catch {
            mdb_env_close(environment)
            throw error
        }
        return environment
    }

    /// Opens the named databases once, in one transaction, and their handles are shared from then on. Committing
    /// keeps the handles, even for a read-only transaction.
    private static func openDatabases(
        _ definitions: [DatabaseDefinition], in environment: OpaquePointer, readOnly: Bool
    ) throws -> ([String: LMDBDatabase], MDB_dbi) {
        var opened: [String: LMDBDatabase] = [:]
        var main: MDB_dbi = 0
        var transaction: OpaquePointer?
        let (transactionFlags, databaseFlags) =
            readOnly ? (UInt32(MDB_RDONLY), UInt32(0)) : (UInt32(0), UInt32(MDB_CREATE))
        do {
            try LMDBError.check(
                mdb_txn_begin(environment, nil, transactionFlags, &transaction), "mdb_txn_begin(open databases)")
            try LMDBError.check(mdb_dbi_open(transaction, nil, 0, &main), "mdb_dbi_open(main)")
            for definition in definitions {
                var dbi: MDB_dbi = 0
                let code = mdb_dbi_open(transaction, definition.name, databaseFlags | definition.flags, &dbi)
                // Opened read-only, a file written before a database was added lacks it: it holds nothing.
                if readOnly, code == MDB_NOTFOUND { continue }
                try LMDBError.check(code, "mdb_dbi_open(\(definition.name))")
                opened[definition.name] = LMDBDatabase(name: definition.name, handle: dbi)
            }
            let commitCode = mdb_txn_commit(transaction)
            transaction = nil
            try LMDBError.check(commitCode, "mdb_txn_commit(open databases)")
        } catch {
            if let transaction { mdb_txn_abort(transaction) }
            throw error
        }
        return (opened, main)
    }

    /// Allocates the disk blocks of `bytes` more past the last used page, ahead of a large write transaction (see
    /// ``DiskBlockReservation``); does nothing unless the environment reserves blocks.
    package func reserveDiskBlocks(bytes: Int) throws {
        guard reservation != nil else { return }
        try reserveDiskBlocks(through: try usedPages() * pageSize + bytes)
    }

    /// Allocates the disk blocks up to `end` bytes of the file, if the environment reserves blocks.
    private func reserveDiskBlocks(through end: Int) throws {
        try reservation?.allocate(through: end, mapSize: currentMapSize.load(ordering: .relaxed))
    }

    /// Runs `body` while up to `bytes` of the map past its last used page are faulted in on another thread (see
    /// ``MapPrefault``); just runs it unless the map is written in place.
    package func whilePrefaulting<R>(bytes: Int, _ body: () throws -> R) throws -> R {
        guard configuration.writeMap, !configuration.readOnly else { return try body() }
        let file = URL(fileURLWithPath: path + "/data.mdb").resolvingSymlinksInPath().path
        let start = try usedPages() * pageSize
        // The pages faulted in, and the large write they are for, need the disk blocks behind them.
        try reserveDiskBlocks(through: start + bytes)
        return try MapPrefault.whileFaultingIn(
            file: file, from: start, to: start + bytes,
            whileMapped: { [weak self] body in
                guard let self else { return false }
                return resizeLock.withSharedLock {
                    guard !isClosed else { return false }
                    body(remaps.load(ordering: .relaxed))
                    return true
                }
            }, body)
    }

    /// Keeps file space prepared ahead of LMDB's writes (see ``DataFileHeadroom``) until ``close()``, on a thread of
    /// its own; returns at once unless the environment was opened with ``Configuration/preparesFileSpace``. The log
    /// runs it beside its writer.
    package func prepareFileSpace() async {
        await headroom?.run()
    }

    /// Ends ``prepareFileSpace()``, which cannot start again.
    package func stopPreparingFileSpace() {
        headroom?.stop()
    }

    /// Pages LMDB uses, read under the resize lock: the meta pages it comes from are in the map.
    private func usedPages() throws(LMDBError) -> Int {
        try resizeLock.withSharedLock { () throws(LMDBError) -> Int in
            guard !isClosed else { throw LMDBError.environmentClosed(path) }
            var info = MDB_envinfo()
            try LMDBError.check(mdb_env_info(handle, &info), "mdb_env_info")
            return info.me_last_pgno + 1
        }
    }

    deinit {
        headroom?.stop()
        if !isClosed { mdb_env_close(handle) }
    }

    /// Waits for open transactions to end, then closes the environment; later transactions fail.
    package func close() {
        headroom?.stop()
        resizeLock.withExclusiveLock {
            guard !isClosed else { return }
            reservation?.releaseUnused()
            mdb_env_close(handle)
            isClosed = true
        }
    }

    /// The database opened under `name` at start.
    package func database(_ name: String) -> LMDBDatabase {
        guard let database = databases[name] else { preconditionFailure("database \(name) was not opened at start") }
        return database
    }

    /// Whether this process only reads the environment.
    package var isReadOnly: Bool { configuration.readOnly }

    /// The named database, nil if a read-only environment's file lacks it.
    package func existingDatabase(_ name: String) -> LMDBDatabase? { databases[name] }

    /// The map size in bytes right now.
    package var mapSize: Int { currentMapSize.load(ordering: .relaxed) }

    /// How many times this process has grown the map.
    package var mapGrowthCount: Int { growths.load(ordering: .relaxed) }

    /// Runs `body` in a read-only transaction that sees one committed state of every database.
    package func read<R>(_ body: (LMDBReadTransaction) throws -> R) throws -> R {
        while true {
            let attempt: TransactionAttempt<R> = try resizeLock.withSharedLock {
                guard !isClosed else { throw LMDBError.environmentClosed(path) }
                var transaction: OpaquePointer?
                let code = mdb_txn_begin(handle, nil, UInt32(MDB_RDONLY), &transaction)
                switch code {
                case MDB_MAP_RESIZED: return .mapResizedElsewhere
                case MDB_READERS_FULL: return .readersFull
                default: try LMDBError.check(code, "mdb_txn_begin(read)")
                }
                defer { mdb_txn_abort(transaction) }
                return .done(try body(LMDBReadTransaction(pointer: transaction!)))
            }
            switch attempt {
            case .done(let value): return value
            case .mapResizedElsewhere: try adoptMapSize()
            case .readersFull: try clearStaleReadersOrThrow()
            case .mapFull: preconditionFailure("a read transaction cannot fill the map")
            }
        }
    }

    /// Runs `body` in a write transaction and commits it. A durable commit returns only once it is fsync'd.
    ///
    /// When the map is full the transaction is aborted, the map grows, and `body` runs again from the start, so
    /// `body` must keep all of its effects inside the transaction until this returns.
    package func write<R>(durable: Bool = true, _ body: (LMDBWriteTransaction) throws -> R) throws -> R {
        var result: R?
        try write(durable: durable) { result = try body($0) }
        return result!
    }

    /// ``write(durable:_:)`` without a result, and not generic: the log's appends call it. Code generic over the
    /// result, compiled once for every type in this module, handles `R` through its value witnesses and runtime
    /// metadata, which a one-event append felt (`chorus bench log`).
    package func write(durable: Bool = true, _ body: (LMDBWriteTransaction) throws -> Void) throws {
        writeSerializer.lock()
        defer { writeSerializer.unlock() }
        // Skipping the fsync takes the environment-wide flag: with LMDB 0.9.24, a transaction begun with MDB_NOSYNC
        // still paid a full sync at its commit.
        if !durable { mdb_env_set_flags(handle, UInt32(MDB_NOSYNC), 1) }
        defer { if !durable { mdb_env_set_flags(handle, UInt32(MDB_NOSYNC), 0) } }
        let flags: UInt32 = 0
        while true {
            try reservation?.ensure(
                used: try usedPages() * pageSize, mapSize: currentMapSize.load(ordering: .relaxed))
            let attempt: TransactionAttempt<Void> = try withFileLock {
                try resizeLock.withSharedLock {
                    guard !isClosed else { throw LMDBError.environmentClosed(path) }
                    var transaction: OpaquePointer?
                    let code = mdb_txn_begin(handle, nil, flags, &transaction)
                    if code == MDB_MAP_RESIZED { return .mapResizedElsewhere }
                    try LMDBError.check(code, "mdb_txn_begin(write)")
                    do {
                        try body(LMDBWriteTransaction(pointer: transaction!))
                    } catch let error as LMDBError where error.code == .mapFull {
                        mdb_txn_abort(transaction)
                        return .mapFull
                    } catch {
                        mdb_txn_abort(transaction)
                        throw error
                    }
                    // LMDB frees the transaction whether or not the commit succeeds.
                    let commitCode = mdb_txn_commit(transaction)
                    if commitCode == MDB_MAP_FULL { return .mapFull }
                    try LMDBError.check(commitCode, "mdb_txn_commit")
                    return .done(())
                }
            }
            switch attempt {
            case .done:
                // Committed: nothing after it may fail the write.
                if !durable, let writeBack, let used = try? usedPages() {
                    writeBack.committed(usedBytes: used * pageSize)
                }
                return
            case .mapFull: try growMap()
            case .mapResizedElsewhere: try adoptMapSize()
            case .readersFull: preconditionFailure("a write transaction takes no reader slot")
            }
        }
    }

    /// Flushes everything committed so far to disk, including transactions committed without a sync.
    package func sync() throws {
        try resizeLock.withSharedLock { () throws(LMDBError) in
            guard !isClosed else { throw LMDBError.environmentClosed(path) }
            try LMDBError.check(mdb_env_sync(handle, 1), "mdb_env_sync(\(path))")
        }
    }

    /// Writes a compacted copy of the environment, as one read transaction sees it, into the empty directory
    /// `destination` (`mdb_env_copy2` with `MDB_CP_COMPACT`: free pages left out). Writers go on meanwhile.
    package func copyCompacted(to destination: String) throws {
        var code = try copyOnce(to: destination)
        if code == MDB_MAP_RESIZED {
            // Another process grew the map since this one opened it.
            try adoptMapSize()
            code = try copyOnce(to: destination)
        }
        try LMDBError.check(code, "mdb_env_copy2(\(destination))")
    }

    private func copyOnce(to destination: String) throws -> Int32 {
        try resizeLock.withSharedLock { () throws(LMDBError) -> Int32 in
            guard !isClosed else { throw LMDBError.environmentClosed(path) }
            return mdb_env_copy2(handle, destination, UInt32(MDB_CP_COMPACT))
        }
    }

    /// The number of entries in `database` at the latest committed state.
    package func entryCount(_ database: LMDBDatabase) throws -> Int {
        try read { try $0.entryCount(database) }
    }

    private func withFileLock<R>(_ body: () throws -> R) rethrows -> R {
        guard let headroom else { return try body() }
        return try headroom.withFileLock(body)
    }

    private enum TransactionAttempt<R> {
        case done(R)
        case mapFull
        case mapResizedElsewhere
        case readersFull
    }

    private func growMap() throws {
        try resizeLock.withExclusiveLock { () throws(LMDBError) in
            let current = currentMapSize.load(ordering: .relaxed)
            guard current < configuration.maximumMapSize else {
                throw LMDBError(
                    MDB_MAP_FULL, "map growth (already at the maximum of \(configuration.maximumMapSize) bytes)")
            }
            let step = min(current, configuration.maximumMapGrowthStep)
            let grown = min(current + step, configuration.maximumMapSize)
            try LMDBError.check(mdb_env_set_mapsize(handle, grown), "mdb_env_set_mapsize(\(grown))")
            currentMapSize.store(grown, ordering: .relaxed)
            remaps.add(1, ordering: .relaxed)
            growths.add(1, ordering: .relaxed)
            logger.info("grew LMDB map", metadata: ["path": "\(path)", "from": "\(current)", "to": "\(grown)"])
        }
    }

    /// Another process grew the map: take on its size (LMDB reads it from the file when given 0).
    private func adoptMapSize() throws {
        try resizeLock.withExclusiveLock { () throws(LMDBError) in
            try LMDBError.check(mdb_env_set_mapsize(handle, 0), "mdb_env_set_mapsize(adopt)")
            var info = MDB_envinfo()
            mdb_env_info(handle, &info)
            currentMapSize.store(info.me_mapsize, ordering: .relaxed)
            remaps.add(1, ordering: .relaxed)
            logger.info("adopted LMDB map size grown by another process", metadata: ["size": "\(info.me_mapsize)"])
        }
    }

    private func clearStaleReadersOrThrow() throws {
        var cleared: Int32 = 0
        mdb_reader_check(handle, &cleared)
        if cleared == 0 {
            throw LMDBError(
                MDB_READERS_FULL, "mdb_txn_begin(read) with all \(configuration.maximumReaders) reader slots in use")
        }
    }
}
