import ChorusLog
import ChorusTestSupport
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
                try await waitUntil { log.statistics.indexedThrough == 10 }
                _ = try await log.append(tick("s0", "10"))
                #expect(try log.read(stream: "s0", limit: 100).map(\.text) == ["0", "3", "6", "10"])
                #expect(try log.streamVersion(of: "s3") == 1)
                #expect(try log.verifyIntegrity().isSound)
            }
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
