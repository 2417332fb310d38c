import ChorusLog
import ChorusStorage

/// One group commit, as ``LMDBEventLog/Configuration/commitObserver`` sees it.
public struct CommitReport: Sendable {
    /// The appends (and decisions) answered by the commit.
    public let appends: Int
    /// The events it appended.
    public let events: Int
    /// From the start of the transaction to the durable commit.
    public let duration: Duration
}

extension LMDBEventLog {
    /// How an ``LMDBEventLog`` is opened.
    public struct Configuration: Sendable {
        /// The LMDB map to start with. The file is sparse: this reserves address space, not disk.
        public var initialMapSize: Int = 1 << 30
        /// The map doubles when full, by at most this much at a time.
        public var maximumMapGrowthStep: Int = 8 << 30
        /// The map never grows past this; appends that need more fail with a storage error.
        public var maximumMapSize: Int = 1 << 40
        /// Read transactions open at once, across every process using the log.
        public var maximumReaders: UInt32 = 1024
        /// Bounds one group commit (an append larger than this still commits, alone), so that a flood of appends
        /// still commits in steady steps.
        public var maximumEventsPerTransaction: Int = 16_384
        /// The stream index and command index are written in batches of about this many events; until then the
        /// writer keeps them in memory, and a reopened log rebuilds them from the events.
        public var indexBatchSize: Int = 4_096
        /// A batch is written sooner once it spans this many streams. Each stream's entries land on pages of their own
        /// (its index leaf and the branches above it), and LMDB keeps every page a transaction dirtied in a pool it
        /// reuses and never frees; so this, not the log's size or the number of its streams, bounds that pool: a few
        /// 4 KiB pages a stream. Bulk imports (``WriteDurability/nonDurableBulkImport``) still fill whole
        /// batches: there speed is the point, and a batch with several events per stream writes each page once for all
        /// of them (bounding imports by streams too halved `chorus bench log`'s bulk import rate).
        public var indexBatchStreams: Int = 256
        /// Key-value tables kept in the log's own environment, for state that must change in the same transaction as
        /// the events it decides (``DecisionBatch/state``): the domain's decision state.
        public var stateTables: [String] = []
        /// Open for reading only, beside the process that writes the log: appends fail with
        /// ``EventLogError/Code/readOnly``, and subscriptions poll for new events.
        public var readOnly = false
        /// Told of each commit of appends, on the committing thread once the appenders have their answers: for
        /// metrics. It must return quickly.
        public var commitObserver: (@Sendable (CommitReport) -> Void)?
        /// Whether an appender that finds the writer idle, nothing queued and the last group a lone append commits its
        /// append on its own thread, sparing two thread wake-ups (see the *Guarantees* article). Turn it off where
        /// appenders run on threads that must never wait on an fsync, such as a server's event loops: every append
        /// then goes through the writer thread.
        public var callersCommitWhenAlone = true
        /// Whether the writer keeps zero-filled, synced space ahead of the data file's last page while it runs, so that
        /// durable commits overwrite the file instead of extending it (see the *Guarantees* article). A bulk import,
        /// whose commits are not durable, gains nothing from it, and its syncs flush the import's pages early: turn it
        /// off there.
        public var preparesFileSpace = true
        /// Whether the log is opened to be filled by a bulk import, whose commits are not synced one by one. The disk's
        /// write-back of the pages committed is then started as the file grows (every 16 MiB), so that the closing
        /// sync finds most of them written, and the file's disk blocks are allocated ahead of each write, so that a
        /// full disk refuses it with ENOSPC before it starts (LMDB reports a write cut short as an input/output
        /// error). See the *Guarantees* article.
        public var isBulkImport = false

        public init() {}

        var environment: LMDBEnvironment.Configuration {
            .init(
                initialMapSize: initialMapSize, maximumMapGrowthStep: maximumMapGrowthStep,
                maximumMapSize: maximumMapSize, maximumReaders: maximumReaders, readOnly: readOnly,
                preparesFileSpace: preparesFileSpace, startsWriteBack: isBulkImport, reservesDiskBlocks: isBulkImport)
        }
    }
}
