import CLMDB
import Foundation

/// Raw LMDB doing what one durable append of one event does at its core: one put of a record-sized value under the
/// next big-endian key, one fsync'd commit, in an environment that grows across calls as the log does. Benchmarks
/// divide the log's figures by this, measured in the same run.
package final class RawLMDBBaseline {
    private let environment: OpaquePointer
    private let database: MDB_dbi
    private var lastKey: UInt64 = 0

    /// Makes a fresh environment in `directory`.
    package init(directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var environment: OpaquePointer?
        try LMDBError.check(mdb_env_create(&environment), "mdb_env_create(baseline)")
        guard let environment else { throw LMDBError(MDB_PANIC, "mdb_env_create(baseline) returned no handle") }
        self.environment = environment
        try LMDBError.check(mdb_env_set_mapsize(environment, 1 << 30), "mdb_env_set_mapsize(baseline)")
        try LMDBError.check(mdb_env_open(environment, directory, UInt32(MDB_NOTLS), 0o644), "mdb_env_open(baseline)")
        var database: MDB_dbi = 0
        var transaction: OpaquePointer?
        try LMDBError.check(mdb_txn_begin(environment, nil, 0, &transaction), "mdb_txn_begin(baseline)")
        try LMDBError.check(mdb_dbi_open(transaction, nil, 0, &database), "mdb_dbi_open(baseline)")
        try LMDBError.check(mdb_txn_commit(transaction), "mdb_txn_commit(baseline)")
        self.database = database
    }

    deinit {
        mdb_env_close(environment)
    }

    /// Times `commits` durable single-put commits, each of a `valueSize`-byte value under an ascending `keySize`-byte
    /// key (at least 8 bytes: the count, big-endian, at its end).
    package func timeDurableCommits(_ commits: Int, keySize: Int, valueSize: Int) throws -> Duration {
        precondition(keySize >= 8, "the baseline's keys end in an 8-byte count")
        var value = [UInt8](repeating: 0x5A, count: valueSize)
        var key = [UInt8](repeating: 0, count: keySize)
        let clock = ContinuousClock()
        let start = clock.now
        for _ in 0..<commits {
            lastKey += 1
            var transaction: OpaquePointer?
            try LMDBError.check(mdb_txn_begin(environment, nil, 0, &transaction), "mdb_txn_begin(baseline)")
            let count = lastKey.bigEndian
            key.withUnsafeMutableBytes { $0.storeBytes(of: count, toByteOffset: keySize - 8, as: UInt64.self) }
            let code = key.withUnsafeMutableBytes { keyBytes in
                value.withUnsafeMutableBytes { valueBytes in
                    var keyValue = MDB_val(mv_size: keySize, mv_data: keyBytes.baseAddress)
                    var dataValue = MDB_val(mv_size: valueSize, mv_data: valueBytes.baseAddress)
                    return mdb_put(transaction, database, &keyValue, &dataValue, UInt32(MDB_APPEND))
                }
            }
            guard code == MDB_SUCCESS else {
                mdb_txn_abort(transaction)
                throw LMDBError(code, "mdb_put(baseline)")
            }
            try LMDBError.check(mdb_txn_commit(transaction), "mdb_txn_commit(baseline)")
        }
        return clock.now - start
    }
}
