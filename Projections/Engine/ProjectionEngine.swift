import ChorusDomain
import ChorusLog
import ChorusStorage
import Foundation
import Logging
import Synchronization

/// Builds every read model from the event log, in one LMDB environment of its own.
///
/// It reads the log in batches and applies each batch to every read model in one write transaction that also stores
/// the checkpoint: each event is applied exactly once, a restart resumes from the checkpoint, and any read
/// transaction sees every read model at one position.
///
/// The first batch into an empty store, when the log holds more than a batch, is a build: everything the log holds, in
/// one transaction, replayed into the models that follow events and then derived once for the ``DerivedReadModel``s.
/// One transaction means each page is written once and never copied by a later commit (about half the store's size,
/// and its time, on a 1M-event log).
public final class ProjectionEngine: Sendable {
    /// The version of the tables' layout; read models of another layout must be rebuilt from the log.
    public static let layoutVersion: UInt64 = 15

    /// The followers from which on an author's posts are merged into the Following feeds when read instead of written
    /// into each (hybrid fan-out; ``FeedFanOut`` says how it was chosen).
    public static let defaultFanOutLimit = FeedFanOut.defaultLimit
    /// The posts and reposts from which on an author's next are merged too, so that a follow or an unfollow moves at
    /// most this many feed entries.
    public static let defaultFanOutPostLimit = FeedFanOut.defaultPostLimit

    /// Every table of the read models' store.
    package static var tables: [StoreTableDefinition] { ReadModels.tables }

    /// The number of entries of every Following feed in `store`.
    package static func feedEntryCount(in store: KeyValueStore) throws -> Int {
        try store.read { try PositionChunks(table: store.table(FollowingFeeds.feeds)).count(in: $0) }
    }

    private static let checkpointKey = Array("position".utf8)
    private static let layoutKey = Array("layout".utf8)
    /// About what the read models store per event of the demo log (470 bytes): faulted in ahead of a build.
    private static let storeBytesPerEvent = 512
    /// Map space set aside per event of the log: room for twice that.
    private static let mapBytesPerEvent = 1_024

    public let log: any EventLog
    /// The data keys that open the events' personal fields.
    public let keys: any PersonalDataKeys
    package let store: KeyValueStore
    private let models: ReadModels
    private let applied: PositionNotifier
    private let batchSize: Int
    private let durable: Bool
    private let logger: Logger
    /// Serialises applying: `run` and `catchUp` may race.
    private let applying = Mutex<Throughput>(Throughput())
    /// Set once other read models have replaced these: nothing is applied any more.
    private let retired = Atomic<Bool>(false)
    /// Why the last batch `run` tried failed, until one succeeds.
    private let failure = Mutex<String?>(nil)
    /// Which keys each batch changed, and at which position: whether an answer read earlier still holds
    /// (``ReadFootprint``).
    private let changes = ChangedKeys()
    /// Tells engines apart for as long as the process runs (an object's address may be reused once it is freed).
    let identity = ProjectionEngine.identities.add(1, ordering: .relaxed).newValue
    private static let identities = Atomic<UInt64>(0)

    /// Opens (creating if needed) the read models in `directory` over `log`.
    /// - Parameters:
    ///   - durable: whether each batch is fsync'd; a rebuild syncs once at the end instead.
    ///   - fanOutLimit: the followers from which on an author's new posts are merged into feeds at read time instead of
    ///     written into each; either way the feeds read the same, so it may differ from run to run.
    ///   - fanOutPostLimit: the posts and reposts an author has made from which on their next are merged too.
    public init(
        log: any EventLog, keys: any PersonalDataKeys, directory: String, batchSize: Int = 1024, durable: Bool = true,
        fanOutLimit: Int = defaultFanOutLimit, fanOutPostLimit: Int = defaultFanOutPostLimit,
        logger: Logger = Logger(label: "chorus.projections")
    ) throws {
        self.log = log
        self.keys = keys
        self.batchSize = batchSize
        self.durable = durable
        self.logger = logger
        // Rebuildable from the log, so pages are written in place (MDB_WRITEMAP, faster); disk blocks are allocated
        // ahead (DiskBlockReservation), so a full disk fails a batch, not the process.
        var configuration = KeyValueStoreConfiguration()
        configuration.writesInPlace = true
        // Address space, not disk: each growth remaps the file and faults every page in again, and a build (one
        // transaction) starts over when the map fills. Room for twice what the demo log stores per event.
        configuration.initialMapSize = max(4 << 30, Int(clamping: log.head.rawValue) &* Self.mapBytesPerEvent)
        let store = try KeyValueStore(
            directory: directory, tables: Self.tables, configuration: configuration, logger: logger)
        let models = ReadModels(store: store, fanOutLimit: fanOutLimit, fanOutPostLimit: fanOutPostLimit)
        self.store = store
        self.models = models
        let (checkpoint, layout) = try store.read { transaction in
            (
                try Self.checkpoint(in: transaction, models.checkpoint),
                try transaction.position(under: Self.layoutKey, in: models.checkpoint)
            )
        }
        if checkpoint > .start, layout?.rawValue != Self.layoutVersion {
            throw ProjectionError.layoutChanged(found: layout?.rawValue ?? 1, current: Self.layoutVersion)
        }
        guard checkpoint <= log.head else { throw ProjectionError.aheadOfLog(checkpoint: checkpoint, head: log.head) }
        applied = PositionNotifier(head: checkpoint)
    }

    /// Why applying the log fails, while `run` is trying again (a full disk); nil while it succeeds.
    public var applyFailure: String? { failure.withLock { $0 } }

    /// The last log position applied to every read model.
    public var position: LogPosition { applied.head }

    /// How far the read models are behind the log. The head is read once: read twice, it can move in between, and
    /// the subtraction then overflows (a soak's server trapped here once every write asked).
    public var lag: UInt64 {
        let head = log.head.rawValue
        return head - min(head, position.rawValue)
    }

    /// Events applied per second of applying, since the engine opened.
    public var eventsPerSecond: Double { applying.withLock { $0.eventsPerSecond } }

    /// Applies what the log holds now (through `last`, if given), batch by batch; returns how many events.
    /// - Parameter progress: called during a build (see the type's discussion) with the events replayed so far and the
    ///   number it replays, every few thousand events.
    @discardableResult
    public func catchUp(through last: LogPosition? = nil, progress: BuildProgress = { _, _ in }) throws -> Int {
        var total = 0
        while true {
            let applied = try applyNextBatch(through: last, buildsAnyLog: true, progress: progress)
            guard applied > 0 else { return total }
            total += applied
        }
    }

    /// Catches up, then follows the live log until the task is cancelled or the log closes. A batch that fails (a
    /// full disk) is logged and tried again, less and less often, until it succeeds: reads go on answering from the
    /// last batch applied meanwhile.
    public func run() async throws {
        var retry = RetryDelay()
        while !Task.isCancelled {
            let applied: Int
            do {
                applied = try applyNextBatch(through: nil, buildsAnyLog: false, progress: { _, _ in })
            } catch let error as EventLogError where error.code == .closed {
                return
            } catch {
                failure.withLock { $0 = "\(error)" }
                let delay = retry.next()
                logger.error(
                    "the read models could not apply the next batch of the log; trying again",
                    metadata: ["position": "\(position)", "error": "\(error)", "retryIn": "\(delay)"])
                do { try await Task.sleep(for: delay) } catch { return }
                continue
            }
            if retry.failures > 0 {
                failure.withLock { $0 = nil }
                logger.notice("the read models apply the log again", metadata: ["position": "\(position)"])
                retry = RetryDelay()
            }
            guard applied == 0 else { continue }
            guard !retired.load(ordering: .relaxed) else { return }
            do {
                _ = try await log.waitForHead(after: position)
            } catch is CancellationError {
                return
            } catch let error as EventLogError where error.code == .closed {
                return
            }
        }
    }

    /// Returns once the read models have applied `target`; throws ``ProjectionError/notCaughtUp(wanted:applied:)``
    /// after `timeout`.
    public func waitUntilApplied(_ target: LogPosition, timeout: Duration) async throws {
        try await waitUntilApplied(target, until: .now + timeout)
    }

    /// Returns once the read models have applied `target`; throws ``ProjectionError/notCaughtUp(wanted:applied:)``
    /// once `deadline` has passed.
    public func waitUntilApplied(_ target: LogPosition, until deadline: ContinuousClock.Instant) async throws {
        guard position < target else { return }
        guard try await applied.waitForHead(after: LogPosition(target.rawValue - 1), until: deadline) != nil else {
            throw ProjectionError.notCaughtUp(wanted: target, applied: applied.head)
        }
    }

    /// Waits until the read models have applied a position past `position`, and returns the position they reached;
    /// nil once `deadline` has passed first. With `endsOnShutdown`, ``endShutdownWaits()`` ends it with
    /// `CancellationError`.
    public func waitForPosition(
        after position: LogPosition, until deadline: ContinuousClock.Instant, endsOnShutdown: Bool = false
    ) async throws -> LogPosition? {
        try await applied.waitForHead(after: position, until: deadline, endsOnShutdown: endsOnShutdown)
    }

    /// Ends the waits made with `endsOnShutdown`, now and from now on.
    public func endShutdownWaits() { applied.endShutdownWaits() }

    /// Lends `body` the read models at one position, and returns its answer with that position.
    public func snapshot<Answer: Sendable>(_ body: (borrowing ReadView) throws -> Answer) throws -> Snapshot<Answer> {
        try snapshot(recordingReadsInto: nil, body)
    }

    /// A snapshot whose reads, past the checkpoint's, `read` records when given.
    private func snapshot<Answer: Sendable>(
        recordingReadsInto read: TouchedKeys?, _ body: (borrowing ReadView) throws -> Answer
    ) throws -> Snapshot<Answer> {
        try snapshotAndExpiry(recordingReadsInto: read, body).snapshot
    }

    /// A snapshot, and when its answer stops holding though nothing changes (``ReadView/answerExpiresAt``).
    private func snapshotAndExpiry<Answer: Sendable>(
        recordingReadsInto read: TouchedKeys?, _ body: (borrowing ReadView) throws -> Answer
    ) throws -> (snapshot: Snapshot<Answer>, expiresAt: EventTime?) {
        try store.read { transaction in
            let position = try Self.checkpoint(in: transaction, models.checkpoint)
            func answer(_ transaction: StoreTransaction) throws -> (Snapshot<Answer>, EventTime?) {
                let view = ReadView(transaction: transaction, models: models, keys: keys, position: position)
                let answer = try body(view)
                return (Snapshot(answer: answer, position: position), view.answerExpiresAt)
            }
            guard let read else { return try answer(transaction) }
            return try transaction.recordingTouches(into: read, answer)
        }
    }

    /// ``snapshot(_:)``, also returning what the answer was read from, so that ``unchangedPosition(of:)`` can tell
    /// later whether it still holds.
    public func snapshotWithFootprint<Answer: Sendable>(_ body: (borrowing ReadView) throws -> Answer) throws -> (
        Snapshot<Answer>, ReadFootprint
    ) {
        let read = TouchedKeys(.reads)
        let (snapshot, expiresAt) = try snapshotAndExpiry(recordingReadsInto: read, body)
        let footprint = ReadFootprint(
            engine: identity, position: snapshot.position, buckets: Array(Set(read.buckets)), expiresAt: expiresAt)
        return (snapshot, footprint)
    }

    /// The position at which an answer read with `footprint` is still exactly what these read models would answer:
    /// the newest applied, or the answer's own if that is newer; nil when anything it was read from changed since, or
    /// it was read from other read models.
    public func unchangedPosition(of footprint: ReadFootprint) -> LogPosition? {
        guard footprint.engine == identity, footprint.expiresAt.map({ EventTime.now < $0 }) ?? true else { return nil }
        // Read before the changes: every batch up to it has recorded its changes (see `applyNextBatch`).
        let now = position
        guard changes.unchanged(footprint.buckets, since: footprint.position.rawValue) else { return nil }
        return max(now, footprint.position)
    }

    /// Runs `body` while no batch is being applied, then retires these read models: their position never moves
    /// again, and `run` returns. An online rebuild swaps in new read models inside `body`, once they have caught up
    /// with these, so that no answer after the swap is older than one before it.
    public func retire<R>(after body: () throws -> R) rethrows -> R {
        try applying.withLock { _ in
            let result = try body()
            retired.store(true, ordering: .relaxed)
            return result
        }
    }

    /// Stops waiters and closes the store.
    public func close() {
        applied.close()
        store.close()
    }

    /// The position the read models in `directory` were applied through, read without opening them for writing (a
    /// server may have them open); nil when `directory` holds none.
    public static func storedPosition(in directory: String) throws -> LogPosition? {
        guard FileManager.default.fileExists(atPath: directory + "/data.mdb") else { return nil }
        var configuration = KeyValueStoreConfiguration()
        configuration.readOnly = true
        let store = try KeyValueStore(
            directory: directory, tables: [ReadModels.checkpoint], configuration: configuration)
        defer { store.close() }
        return try store.read { try checkpoint(in: $0, store.table(ReadModels.checkpoint)) }
    }

    /// Builds the read models of `log` from position 1 through `last` (time travel) or the head, into `directory`,
    /// which must not hold read models yet; returns the position built to.
    public static func rebuild(
        log: any EventLog, keys: any PersonalDataKeys, into directory: String, through last: LogPosition? = nil,
        fanOutLimit: Int = defaultFanOutLimit, fanOutPostLimit: Int = defaultFanOutPostLimit,
        logger: Logger = Logger(label: "chorus.projections"), progress: BuildProgress = { _, _ in }
    ) throws -> LogPosition {
        let engine = try ProjectionEngine(
            log: log, keys: keys, directory: directory, durable: false, fanOutLimit: fanOutLimit,
            fanOutPostLimit: fanOutPostLimit, logger: logger)
        defer { engine.close() }
        guard engine.position == .start else {
            throw ProjectionError.inconsistent("\(directory) already holds read models at position \(engine.position)")
        }
        try engine.catchUp(through: last, progress: progress)
        try engine.store.sync()
        return engine.position
    }

    /// Applies the next batch through `last` (or the head); returns how many events. Into an empty store it is a build
    /// when the log holds more than a batch, or with `buildsAnyLog` (a rebuild, whatever the log's size).
    private func applyNextBatch(through last: LogPosition?, buildsAnyLog: Bool, progress: BuildProgress) throws -> Int {
        try applying.withLock { throughput in
            guard !retired.load(ordering: .relaxed) else { return 0 }
            let from = position
            let remaining = last.map { Int(clamping: $0.rawValue - min($0.rawValue, from.rawValue)) } ?? Int.max
            guard remaining > 0 else { return 0 }
            let started = ContinuousClock.now
            let written = TouchedKeys(.writes)
            let events = min(remaining, Int(clamping: log.head.rawValue))
            // A build sets up threads, spill files and file space: for a long log, not for a new server's first events,
            // which are applied as any later batch is.
            let builds = from == .start && (events > batchSize || buildsAnyLog)
            func write() throws -> LogPosition? {
                try self.store.write(durable: self.durable) { transaction -> LogPosition? in
                    // Written again from the start when the map grows.
                    written.removeAll()
                    let newest: LogPosition?
                    if builds {
                        newest = try self.build(upTo: remaining, in: transaction, progress: progress)
                    } else {
                        let recorded = try self.log.read(from: from.next, limit: min(self.batchSize, remaining))
                        newest = try transaction.recordingTouches(into: written) { try self.replay(recorded, $0) }
                        if from == .start, newest != nil { try self.storeLayoutVersion(in: transaction) }
                    }
                    if let newest {
                        try transaction.put(
                            PositionValue.encode(newest), for: Self.checkpointKey, in: self.models.checkpoint)
                    }
                    return newest
                }
            }
            // A build fills the store's file from nothing: the other core faults its pages in ahead of the writer.
            let newest = try builds ? store.whilePrefaulting(bytes: events &* Self.storeBytesPerEvent, write) : write()
            guard let newest else { return 0 }
            let count = Int(newest.rawValue - from.rawValue)
            // Before the position is published: whoever reads it must find the batch's changes too.
            if builds {
                changes.recordEverything(at: newest.rawValue)
            } else {
                changes.record(written, at: newest.rawValue)
            }
            applied.publish(newest)
            throughput.record(events: count, in: ContinuousClock.now - started)
            return count
        }
    }

    /// Replays up to `limit` events from the start of the log into the models that follow events, then derives the
    /// others; returns the last position, or nil if the log is empty.
    private func build(upTo limit: Int, in transaction: StoreTransaction, progress: BuildProgress) throws
        -> LogPosition?
    {
        let followers = models.inApplyOrder.filter { !($0 is any DerivedReadModel) }
        let derived = models.inApplyOrder.compactMap { $0 as? any DerivedReadModel }
        let total = min(limit, Int(clamping: log.head.rawValue))
        var replayed = 0
        var newest: LogPosition?
        var deletions: [(DomainEvent, EventEnvelope)] = []
        let loaded = followers.flatMap { type(of: $0).tablesLoadedInKeyOrder }.map { store.table($0) }
        try DecodedLogReader.readingAhead(log, keys: keys, limit: limit) { reader in
            try transaction.loadingInKeyOrder(loaded, spillingInto: store.directory) { transaction in
                while true {
                    let slice = try reader.next()
                    guard let last = slice.last?.envelope.position else { break }
                    replayed += slice.count
                    for decoded in slice {
                        // Loaded once: passing `decoded.event` to each model copies it for each, retaining its strings.
                        let (event, envelope) = (decoded.event, decoded.envelope)
                        if event.isDeletion {
                            deletions.append((event, envelope))
                            continue
                        }
                        for model in followers { try model.apply(event, at: envelope, in: transaction) }
                    }
                    reader.recycle(consume slice)
                    newest = last
                    progress(replayed, max(total, replayed))
                }
            }
        }
        guard let newest else { return nil }
        // Deletions read tables being loaded (which would merge each load early); no later event touches what they
        // delete (the decisions refuse it), so applied after the replay they take out what they would in place.
        for (event, envelope) in deletions {
            for model in followers { try model.apply(event, at: envelope, in: transaction) }
        }
        let derivedOutOfOrder = derived.flatMap { type(of: $0).tablesLoadedInKeyOrder }.map { store.table($0) }
        try transaction.loadingInKeyOrder(derivedOutOfOrder, spillingInto: store.directory) { transaction in
            for model in derived { try model.derive(in: transaction) }
        }
        try storeLayoutVersion(in: transaction)
        return newest
    }

    /// Records that the store holds read models of this layout: written with its first events.
    private func storeLayoutVersion(in transaction: StoreTransaction) throws {
        // The version as 8 big-endian bytes, as a position is stored.
        try transaction.put(
            PositionValue.encode(LogPosition(Self.layoutVersion)), for: Self.layoutKey, in: models.checkpoint)
    }

    /// Applies `recorded` to every model; returns the last position, or nil if there was nothing.
    private func replay(_ recorded: [RecordedEvent], _ transaction: StoreTransaction) throws -> LogPosition? {
        // Decoded one at a time: a batch's decoded events would be several times the size of its records.
        for record in recorded {
            let event = try DomainEvent(decoding: record, keys: keys)
            let envelope = EventEnvelope(position: record.position, recordedAt: record.recordedAt)
            for model in models.inApplyOrder { try model.apply(event, at: envelope, in: transaction) }
        }
        return recorded.last?.position
    }

    private static func checkpoint(in transaction: StoreTransaction, _ table: StoreTable) throws -> LogPosition {
        try transaction.position(under: checkpointKey, in: table) ?? .start
    }
}

/// Reports a build's progress: the events replayed so far, and how many it replays.
public typealias BuildProgress = (_ replayed: Int, _ total: Int) -> Void

/// Events applied and time spent applying them.
struct Throughput {
    private var events = 0
    private var time = Duration.zero

    mutating func record(events: Int, in duration: Duration) {
        self.events += events
        time += duration
    }

    var eventsPerSecond: Double {
        let (seconds, attoseconds) = time.components
        let total = Double(seconds) + Double(attoseconds) / 1e18
        return total > 0 ? Double(events) / total : 0
    }
}

extension DomainEvent {
    /// A post or comment deleted: a build applies these after replaying everything else (``ProjectionEngine``).
    fileprivate var isDeletion: Bool {
        switch self {
        case .postDeleted, .commentDeleted, .accountDeleted: true
        default: false
        }
    }
}
