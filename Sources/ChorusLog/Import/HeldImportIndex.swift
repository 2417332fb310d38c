import Synchronization

/// The index entries of an import into an empty log, held in memory batch by batch instead of written with each
/// batch's records, and written once, at the end, appended in key order to the empty tables
/// (``DecisionBatch/writeIndex(heldIn:)``). Batch by batch, nearly every entry was a search and a page copied somewhere
/// in a tree that grows to a million entries: with the decision state's changes, written likewise, they were the
/// log's writer's work, and made it the import's bottleneck. Until they are written the log's checkpoint stays
/// where it was, so a log whose import stopped without writing them reads its events after the checkpoint back at its
/// next opening, as after any crash.
///
/// The checks the index made are made against what is held: each stream goes on from its last version, and no
/// command comes twice.
public final class HeldImportIndex: Sendable {
    /// A batch's entries as held: each of its streams by its place in ``Held/streams`` and where its entries are.
    /// Its names and commands are not kept: the names are in ``Held/streams``, the commands in ``Held/commands``.
    private struct Run {
        let entries: [IndexEntries.Entry]
        let streams: [(place: Int32, entries: Range<Int>)]
    }

    private struct Held {
        var runs: [Run] = []
        /// Every stream held, by name, and the last version held of each.
        var streams = StreamNameTable(capacity: 1 << 16)
        var lastVersions: [UInt64] = []
        /// The places in `streams` of the streams of the batch ``admits(_:)`` admitted last, for ``add(_:)``.
        var admittedPlaces: [Int] = []
        /// The highest command id held. Commands' ids (UUIDv7) nearly always come in increasing order, and one above
        /// it is new without a look at the others.
        var highestCommand: CommandKey?
        /// Every command id held, made the first time one comes below ``highestCommand``.
        var commandIDs: Set<CommandKey>?
        /// Every command held, in the order held (each run's sorted), gathered as they come: gathered at the end,
        /// their copy's fresh pages were faulted in on the one core the end runs on.
        var commands: [IndexEntries.Command] = []
        /// Whether ``commands`` are in id order.
        var commandsIncrease = true
        var lastPosition = LogPosition.start
        var eventCount = 0
    }

    /// A command id as the commands table orders it.
    private struct CommandKey: Hashable, Comparable {
        let high: UInt64
        let low: UInt64

        init(_ command: IndexEntries.Command) { (high, low) = (command.high, command.low) }

        static func < (left: Self, right: Self) -> Bool { (left.high, left.low) < (right.high, right.low) }
    }

    /// One append at a time reads and adds, but on whichever thread the log's writer runs it.
    private let held = Mutex(Held())
    /// At most how many events will be held, and so commands.
    private let maximumEvents: Int

    /// `maximumEvents`: at most how many events will be held (room for their commands is made with the first batch).
    public init(maximumEvents: Int) { self.maximumEvents = maximumEvents }

    /// The events whose entries are held.
    public var eventCount: Int { held.withLock { $0.eventCount } }

    /// The batches whose entries are held.
    public var batchCount: Int { held.withLock { $0.runs.count } }

    /// The last position whose entries are held; ``LogPosition/start`` when none are.
    public var lastPosition: LogPosition { held.withLock { $0.lastPosition } }

    /// Whether `index`, a batch's entries, may follow those held: each of its streams goes on from the last version
    /// held (a stream held for the first time begins at 1), and none of its commands is held. Within the batch,
    /// ``IndexEntries/runsOn`` checked the rest.
    package func admits(_ index: IndexEntries) -> Bool {
        held.withLock { held in
            held.admittedPlaces.removeAll(keepingCapacity: true)
            let places = index.names.withUnsafeBufferPointer { names in
                held.streams.places(of: index.streams.map { UnsafeBufferPointer(rebasing: names[$0.name]) })
            }
            held.lastVersions += repeatElement(0, count: places.lazy.filter(\.added).count)
            for (stream, (place, _)) in zip(index.streams, places) {
                guard index.firstVersion(of: stream) == held.lastVersions[place] + 1 else { return false }
                held.admittedPlaces.append(place)
            }
            guard let first = index.commands.first, let highest = held.highestCommand, CommandKey(first) <= highest
            else { return true }
            if held.commandIDs == nil { held.commandIDs = Set(held.commands.lazy.map(CommandKey.init)) }
            return index.commands.allSatisfy { !held.commandIDs!.contains(CommandKey($0)) }
        }
    }

    /// Holds the entries of `prepared`, whose records were appended: the batch ``admits(_:)`` admitted last.
    public func add(_ prepared: PreparedRecordedEvents) {
        let index = prepared.index
        held.withLock { held in
            precondition(held.admittedPlaces.count == index.streams.count, "a batch held without being admitted")
            for (stream, place) in zip(index.streams, held.admittedPlaces) {
                held.lastVersions[place] = index.entries[stream.entries.upperBound - 1].version
            }
            held.runs.append(
                Run(
                    entries: index.entries,
                    streams: zip(held.admittedPlaces, index.streams).map { (Int32($0), $1.entries) }))
            held.admittedPlaces.removeAll(keepingCapacity: true)
            if let last = index.commands.last {
                held.highestCommand = max(held.highestCommand ?? CommandKey(last), CommandKey(last))
                held.commandIDs?.formUnion(index.commands.lazy.map(CommandKey.init))
            }
            if let first = index.commands.first, let last = held.commands.last, CommandKey(first) <= CommandKey(last) {
                held.commandsIncrease = false
            }
            // Room for them all at once: grown as they came, the commands were copied at every doubling, and each
            // larger copy's pages faulted in (80 of this function's 111 samples in an import).
            if held.commands.isEmpty { held.commands.reserveCapacity(maximumEvents) }
            held.commands += index.commands
            held.lastPosition = prepared.lastPosition
            held.eventCount += prepared.eventCount
        }
    }

    /// Lets go of everything held: written, or not to be.
    public func removeAll() { held.withLock { $0 = Held() } }

    /// Lends `body` what is held, as one batch's entries in key order, and the last position held: a log appends them
    /// to its empty index tables and moves its checkpoint there.
    package func withMergedEntries<R>(_ body: (IndexEntries, LogPosition) throws -> R) rethrows -> R {
        try held.withLock { held in try body(Self.merged(held), held.lastPosition) }
    }

    /// The runs' entries as one run's, in key order: each stream once, by name, its entries from every run in turn
    /// (in version order); the commands by id. The distinct names are sorted, not the runs' streams (a user's stream
    /// is in most runs, and equal names compare to their last byte). Written from the runs themselves, stream by
    /// stream, each run handed on was copied, its four arrays retained and released, on the one core an import's end
    /// runs on.
    private static func merged(_ held: Held) -> IndexEntries {
        let names = held.streams
        // How many entries each stream has, in all the runs.
        var counts = [Int](repeating: 0, count: names.count)
        for run in held.runs { for stream in run.streams { counts[Int(stream.place)] += stream.entries.count } }
        let sortedPlaces = IndexEntries.sortedByName(Array(0..<names.count), in: names.names) {
            names.range(of: $0)
        }
        // Where each stream's entries go: after those of the names before it.
        let (streams, starts, entryCount) = IndexEntries.laidOut(sortedPlaces, counts: counts, names: names)
        var next = starts
        let entries = [IndexEntries.Entry](unsafeUninitializedCapacity: entryCount) { entries, initialized in
            for run in held.runs {
                run.entries.withUnsafeBufferPointer { runEntries in
                    for stream in run.streams {
                        (entries.baseAddress! + next[Int(stream.place)]).initialize(
                            from: runEntries.baseAddress! + stream.entries.lowerBound, count: stream.entries.count)
                        next[Int(stream.place)] += stream.entries.count
                    }
                }
            }
            initialized = entryCount
        }
        // Ids (UUIDv7) nearly always come in increasing order, the runs too: then as held, without a sort.
        var commands = held.commands
        if !held.commandsIncrease { commands.sort { ($0.high, $0.low) < ($1.high, $1.low) } }
        return IndexEntries(streams: streams, entries: entries, names: names.names, commands: commands)
    }
}
