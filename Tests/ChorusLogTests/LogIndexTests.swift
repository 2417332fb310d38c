import ChorusLMDBLog
import ChorusLog
import ChorusStorage
import ChorusTestSupport
import Logging
import Testing

/// Stream reads, stream versions and command retries must not depend on whether the writer has written its indexes
/// yet, nor on whether the log was reopened since (which rebuilds the unindexed part from the events).
@Suite("Log indexes")
struct LogIndexTests {
    private static let smallIndexBatches = {
        var configuration = LMDBEventLog.Configuration()
        configuration.indexBatchSize = 5
        return configuration
    }()

    @Test("reads and decisions agree across the index checkpoint, before and after reopening")
    func acrossTheCheckpoint() async throws {
        try await withTemporaryDirectory { directory in
            let commands = (0..<23).map { _ in CommandID() }
            try await withLog(directory, configuration: Self.smallIndexBatches) { log in
                for (index, command) in commands.enumerated() {
                    let stream: StreamID = index % 3 == 0 ? "three" : "other"
                    _ = try await log.append(tick(stream, "\(index)", command: command))
                }
                let indexed = log.statistics.indexedThrough
                #expect(indexed.rawValue >= 20 && indexed < log.head, "part of the log is indexed, part is not")
                try expectConsistent(log, commands: commands)
            }
            // Reopened: the writer rebuilt its unindexed tail from the events (closing wrote the indexes, so crash
            // recovery is covered by the crash test); everything must read the same.
            try await withLog(directory, configuration: Self.smallIndexBatches) { log in
                #expect(log.statistics.indexedThrough == log.head)
                try expectConsistent(log, commands: commands)
                let next = try await log.append(tick("three", "late", expected: .exact(8)))
                #expect(next.streamVersion == 9)
            }
        }
    }

    /// A transaction's appends are recorded in the writer's unindexed tail as they are staged; one that does not
    /// commit must leave no trace there, or the next decision would see versions and command ids that never were.
    @Test("appends in a rehearsal or an aborted write leave no stream version or command id behind")
    func uncommittedAppendsLeaveNothing() async throws {
        try await withTemporaryDirectory { directory in
            try await withLog(directory) { log in
                _ = try await log.append(tick("kept", "1"))
                let command = CommandID()
                // The same appends each time: to the stream already there, and twice to a new one.
                let appends: @Sendable (any DecisionBatch) throws -> Void = { batch in
                    _ = try batch.append(tick("kept", "2", expected: .exact(1)))
                    _ = try batch.append(tick("new", "1", expected: .noStream, command: command))
                    _ = try batch.append(tick("new", "2", expected: .exact(1)))
                }
                try await log.rehearse(eventCount: 3, appends)
                await #expect(throws: EventLogError.self) {
                    try await log.append(.durable, eventCount: 3) { batch in
                        try appends(batch)
                        throw LMDBError(LMDBError.Code.panic.rawValue, "a storage failure after the appends")
                    }
                }
                #expect(log.head == 1)
                // Decided as if neither had happened: the versions are the committed ones, the command is new.
                try await log.append(.durable, eventCount: 3, decide: appends)
                #expect(try log.read(from: 1).map(\.text) == ["1", "2", "1", "2"])
                #expect(try log.streamVersion(of: "kept") == 2)
                #expect(try log.streamVersion(of: "new") == 2)
                let retried = try await log.append(tick("new", "1", expected: .noStream, command: command))
                #expect(retried.isReplay)
            }
        }
    }

    @Test("a batch spanning many streams is indexed before it reaches its size, and reads the same")
    func manyStreamsIndexSooner() async throws {
        try await withTemporaryDirectory { directory in
            var configuration = LMDBEventLog.Configuration()
            configuration.indexBatchStreams = 4
            try await withLog(directory, configuration: configuration) { log in
                // Three streams: far below both bounds, nothing is indexed.
                for index in 0..<9 { _ = try await log.append(tick(try StreamID("s\(index % 3)"), "\(index)")) }
                #expect(log.statistics.indexedThrough == .start)
                // A fourth stream: the batch is written, though it holds 10 events of the 4,096 it may.
                // (It is written after the append is answered.)
                _ = try await log.append(tick("s3", "9"))
                try await eventually("indexed through 10") { log.statistics.indexedThrough == 10 }
                _ = try await log.append(tick("s0", "10"))
                #expect(try log.read(stream: "s0", limit: 100).map(\.text) == ["0", "3", "6", "10"])
                #expect(try log.streamVersion(of: "s3") == 1)
                #expect(try log.verifyIntegrity().isSound)
            }
        }
    }

    /// A stream's head is its last stream-index key: the one at or before its name, NUL and the highest version. A
    /// stream whose name starts another's, or that sorts just before or after one, must still find its own.
    @Test("stream heads come from the stream index, for names that start one another, across the checkpoint")
    func headsOfNamesThatPrefixOthers() async throws {
        try await withTemporaryDirectory { directory in
            let streams: [StreamID] = ["s", "s1", "s10", "s1a", "t", "s0"]
            // Stream i gets i + 1 events.
            let appends = streams.enumerated().flatMap { index, stream in Array(repeating: stream, count: index + 1) }
            try await withLog(directory, configuration: Self.smallIndexBatches) { log in
                for stream in appends { _ = try await log.append(tick(stream)) }
                #expect(log.statistics.indexedThrough > 0)
            }
            // Reopened, everything is indexed: the versions come from the index alone.
            try await withLog(directory, configuration: Self.smallIndexBatches) { log in
                #expect(log.statistics.indexedThrough == log.head)
                for (index, stream) in streams.enumerated() {
                    #expect(try log.streamVersion(of: stream) == UInt64(index + 1), "\(stream)")
                    let stale = await #expect(throws: EventLogError.self) {
                        try await log.append(tick(stream, expected: .exact(UInt64(index))))
                    }
                    #expect(stale?.actualVersion == UInt64(index + 1))
                    let next = try await log.append(tick(stream, expected: .exact(UInt64(index + 1))))
                    #expect(next.streamVersion == UInt64(index + 2))
                }
                #expect(try log.streamVersion(of: "s2") == 0)
                let fresh = try await log.append(tick("s100", expected: .noStream))
                #expect(fresh.streamVersion == 1)
                #expect(try log.verifyIntegrity().isSound)
            }
        }
    }

    /// Storage format 1 kept each stream's head in a `stream-heads` table as well. A writer opening such a log drops
    /// the table and stamps format 2 in one transaction; a reader reads it as it is.
    @Test("a log of storage format 1: read as it is, and brought to format 2 by its writer without its heads table")
    func formatOneLogIsUpgraded() async throws {
        try await withTemporaryDirectory { directory in
            try await withLog(directory, configuration: Self.smallIndexBatches) { log in
                for index in 0..<12 { _ = try await log.append(tick(index % 3 == 0 ? "three" : "other")) }
            }
            // What format 1 left: the same tables, the heads besides, and its stamp.
            try Self.withEnvironment(at: directory, readOnly: false) { environment in
                try environment.write { transaction in
                    let heads = environment.database("stream-heads")
                    for (stream, version) in [("three", UInt64(4)), ("other", UInt64(8))] {
                        try Array(stream.utf8).withUnsafeBytes { key in
                            try withUnsafeBytes(of: version.littleEndian) {
                                try transaction.put($0, for: key, in: heads)
                            }
                        }
                    }
                    try Self.putFormat(1, in: transaction, environment: environment)
                }
            }
            var readOnly = LMDBEventLog.Configuration()
            readOnly.readOnly = true
            let reader = try LMDBEventLog(directory: directory, configuration: readOnly)
            #expect(try reader.streamVersion(of: "three") == 4)
            #expect(try reader.verifyIntegrity().isSound)
            reader.close()
            let before = try Self.storedLayout(at: directory)
            #expect(before.format == 1 && before.hasHeadsTable)

            try await withLog(directory, configuration: Self.smallIndexBatches) { log in
                let stale = await #expect(throws: EventLogError.self) {
                    try await log.append(tick("three", expected: .exact(3)))
                }
                #expect(stale?.actualVersion == 4)
                let next = try await log.append(tick("other", expected: .exact(8)))
                #expect(next.streamVersion == 9)
                #expect(try log.verifyIntegrity().isSound)
            }
            let after = try Self.storedLayout(at: directory)
            #expect(after.format == 2 && !after.hasHeadsTable)
        }
    }

    private static func withEnvironment<R>(
        at directory: String, readOnly: Bool, _ body: (LMDBEnvironment) throws -> R
    ) throws -> R {
        let configuration = LMDBEnvironment.Configuration(
            initialMapSize: 1 << 20, maximumMapGrowthStep: 1 << 20, maximumMapSize: 1 << 24, maximumReaders: 8,
            readOnly: readOnly, preparesFileSpace: false)
        let environment = try LMDBEnvironment(
            path: directory, configuration: configuration,
            databases: ["stream-index", "stream-heads", "commands", "meta"].map { .init(name: $0) },
            logger: Logger(label: "test"))
        defer { environment.close() }
        return try body(environment)
    }

    private static func putFormat(
        _ format: UInt32, in transaction: LMDBWriteTransaction, environment: LMDBEnvironment
    ) throws {
        try Array("format".utf8).withUnsafeBytes { key in
            try withUnsafeBytes(of: format.littleEndian) {
                try transaction.put($0, for: key, in: environment.database("meta"))
            }
        }
    }

    /// The stamped storage format, and whether a `stream-heads` table is there.
    private static func storedLayout(at directory: String) throws -> (format: UInt32, hasHeadsTable: Bool) {
        try withEnvironment(at: directory, readOnly: true) { environment in
            let format = try environment.read { transaction in
                try Array("format".utf8).withUnsafeBytes { key in
                    try transaction.value(in: environment.database("meta"), for: key)
                        .map { UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self)) }
                }
            }
            return (format ?? 0, environment.existingDatabase("stream-heads") != nil)
        }
    }

    private func expectConsistent(_ log: LMDBEventLog, commands: [CommandID]) throws {
        let three = try log.read(stream: "three", limit: 100)
        #expect(three.map(\.text) == stride(from: 0, to: 23, by: 3).map { "\($0)" })
        #expect(three.map(\.streamVersion) == Array(1...8))
        #expect(try log.read(stream: "three", fromVersion: 3, limit: 4).map(\.streamVersion) == [3, 4, 5, 6])
        #expect(
            try log.read(stream: "three", fromVersion: 7, direction: .backward, limit: 5).map(\.streamVersion) == [
                7, 6, 5, 4, 3,
            ])
        #expect(try log.read(stream: "three", fromVersion: 100, direction: .backward, limit: 100).count == 8)
        #expect(try log.readStreamBackward("three", from: nil, limit: 3).map(\.streamVersion) == [8, 7, 6])
        #expect(try log.readStreamBackward("three", from: 2, limit: 3).map(\.streamVersion) == [2, 1])
        #expect(try log.streamVersion(of: "three") == 8)
        #expect(try log.streamVersion(of: "other") == 15)
        #expect(try log.verifyIntegrity().isSound)
    }

    @Test("command retries and expected versions hold for commands on both sides of the checkpoint")
    func decisionsAcrossTheCheckpoint() async throws {
        try await withTemporaryDirectory { directory in
            try await withLog(directory, configuration: Self.smallIndexBatches) { log in
                var outcomes: [(CommandID, AppendOutcome)] = []
                for index in 0..<12 {
                    let command = CommandID()
                    outcomes.append(
                        (
                            command,
                            try await log.append(
                                tick("s", "\(index)", expected: .exact(UInt64(index)), command: command))
                        ))
                }
                #expect(log.statistics.indexedThrough.rawValue == 10)
                for (command, original) in outcomes {
                    let retry = try await log.append(tick("s", "retry", command: command))
                    #expect(retry.isReplay)
                    #expect(
                        retry.firstPosition == original.firstPosition && retry.streamVersion == original.streamVersion)
                }
                #expect(log.head == 12)
                let stale = await #expect(throws: EventLogError.self) {
                    try await log.append(tick("s", expected: .exact(10)))
                }
                #expect(stale?.actualVersion == 12)
            }
        }
    }
}
