import ChorusCluster
import ChorusDataKeys
import ChorusDomain
import ChorusLMDBLog
import ChorusLog
import ChorusProjections
import ChorusStorage
import Foundation

/// Where a data directory keeps its parts: everything Chorus stores is under one directory.
///
/// - `log/`: the event log, with the decision state in its environment
/// - `projections` → `projections.<id>/`: the current generation of read models
/// - `media/`: uploaded images, content-addressed
/// - `keys/`: each user's data key, which their personal fields in the log and their media are encrypted under
/// - `responses/`: first responses to requests sent with an `Idempotency-Key`
/// - `session.key`: the secret bearer tokens and password-reset tokens are signed with
/// - `session-activity`: when each session was last seen (saved at shutdown)
/// - `webhooks/`: the outbox of webhooks to send, when they are configured
/// - `pushes/`: the outbox of pushes to send to phones, when APNs or FCM is configured
public struct DataDirectory: Sendable {
    public let root: String

    public init(_ root: String) { self.root = root }

    public var log: String { root + "/log" }
    public var projections: String { ProjectionGenerations(dataDirectory: root).current }
    public var media: String { root + "/media" }
    public var responses: String { root + "/responses" }
    public var keys: String { root + "/keys" }
    public var sessionSecret: String { root + "/session.key" }
    public var sessionActivity: String { root + "/session-activity" }
    public var webhooks: String { root + "/webhooks" }
    public var pushes: String { root + "/pushes" }

    /// The log, with the domain's decision state in it; its writer runs while ``LMDBEventLog/run()`` runs.
    /// - Parameter maximumSize: bytes the log's file may grow to, past which every append fails (LMDB's map size).
    /// - Parameter replica: a cluster node's replica of the cluster's log, which keeps its bookkeeping beside the
    ///   decision state (``ClusterEventLog/replicaStateTables``).
    /// - Parameter callersCommitWhenAlone: see ``LMDBEventLog/Configuration/callersCommitWhenAlone``; a server's
    ///   appenders run on its event loops, which must not wait on an fsync.
    /// - Parameter bulkImport: the log is opened to be filled by a bulk import
    ///   (``LMDBEventLog/Configuration/isBulkImport``), which prepares no file space ahead
    ///   (``LMDBEventLog/Configuration/preparesFileSpace``).
    public func openLog(
        readOnly: Bool = false, maximumSize: Int? = nil, replica: Bool = false,
        callersCommitWhenAlone: Bool = true, bulkImport: Bool = false,
        commitObserver: (@Sendable (CommitReport) -> Void)? = nil
    ) throws -> LMDBEventLog {
        var configuration = LMDBEventLog.Configuration()
        configuration.callersCommitWhenAlone = callersCommitWhenAlone
        configuration.preparesFileSpace = !bulkImport
        configuration.isBulkImport = bulkImport
        configuration.stateTables = DecisionState.tableNames + (replica ? ClusterEventLog.replicaStateTables : [])
        configuration.readOnly = readOnly
        if let maximumSize {
            configuration.maximumMapSize = maximumSize
            configuration.initialMapSize = min(configuration.initialMapSize, maximumSize)
        }
        configuration.commitObserver = commitObserver
        return try LMDBEventLog(directory: log, configuration: configuration)
    }

    /// The users' data keys. A bulk write (`durable: false`) syncs them with ``DataKeyStore/sync()``. `preloaded` reads
    /// them all into memory at once (``DataKeyStore/preload()``): for a command that goes through the whole log.
    public func openKeys(durable: Bool = true, preloaded: Bool = false) throws -> DataKeyStore {
        let store = try DataKeyStore(directory: keys, durable: durable)
        if preloaded { try store.preload() }
        return store
    }

    /// Stores `secret` as the session secret (a cluster's, shared by every node), replacing this directory's own.
    public func adoptSessionSecret(_ secret: [UInt8]) throws {
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        try AtomicFile.write(secret, to: sessionSecret, permissions: 0o600)
    }

    /// The session secret, made on first use: readable by the owner only, written whole or not at all.
    public func sessionSecretBytes() throws -> [UInt8] {
        let files = FileManager.default
        if let existing = files.contents(atPath: sessionSecret) {
            guard existing.count >= SessionTokens.secretSize else {
                throw DataDirectoryError(
                    "\(sessionSecret) holds \(existing.count) bytes, not \(SessionTokens.secretSize)")
            }
            return Array(existing)
        }
        try files.createDirectory(atPath: root, withIntermediateDirectories: true)
        let secret = SessionTokens.makeSecret()
        try AtomicFile.write(secret, to: sessionSecret, permissions: 0o600)
        // Two servers racing to make it: the first rename wins for both, as each reads the file back.
        guard let stored = files.contents(atPath: sessionSecret) else {
            throw DataDirectoryError("could not read back \(sessionSecret)")
        }
        return Array(stored)
    }
}

public struct DataDirectoryError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
