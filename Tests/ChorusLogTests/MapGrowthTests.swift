import ChorusLMDBLog
import ChorusLog
import ChorusProcesses
import ChorusTestSupport
import Foundation
import Logging
import Testing

/// Map growth is logged at info level; these tests grow the map dozens of times.
private let quietLogger = {
    var logger = Logger(label: "chorus.log.test")
    logger.logLevel = .warning
    return logger
}()

/// A map of 64 KiB that grows by 64 KiB at a time: many MDB_MAP_FULLs from little data.
private let tinyMap = {
    var configuration = LMDBEventLog.Configuration()
    configuration.initialMapSize = 64 << 10
    configuration.maximumMapGrowthStep = 64 << 10
    return configuration
}()

@Suite("Map growth")
struct MapGrowthTests {
    @Test("a log started with a tiny map grows through many MDB_MAP_FULLs and loses nothing")
    func growsFromTinyMap() async throws {
        try await withTemporaryDirectory { directory in
            try await withLog(directory, configuration: tinyMap, logger: quietLogger) { log in

                let writers = 8
                let perWriter = 300
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for writer in 0..<writers {
                        group.addTask {
                            for index in 0..<perWriter {
                                let payload = [UInt8](repeating: UInt8(writer), count: 400 + (index % 7) * 100)
                                _ = try await log.append(
                                    AppendRequest(
                                        stream: try StreamID("w-\(writer)"),
                                        events: [NewEvent(type: "Blob", payload: payload)]))
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                // Bulk import grows the map too, and a bulk batch that hits MAP_FULL is retried whole.
                let bulk = (0..<500).map { index in
                    AppendRequest(
                        stream: "bulk", events: [NewEvent(type: "Blob", payload: [UInt8](repeating: 7, count: 900))])
                }
                let results = try await log.appendNonDurableBulkImport(bulk)
                #expect(results.allSatisfy { if case .success = $0 { true } else { false } })
                try log.syncToDisk()

                let statistics = log.statistics
                #expect(statistics.mapGrowths >= 20, "grew \(statistics.mapGrowths) times")
                #expect(statistics.mapSize > 64 << 10)
                #expect(log.head.rawValue == UInt64(writers * perWriter + 500))
                for writer in 0..<writers {
                    let events = try log.read(stream: try StreamID("w-\(writer)"), limit: 1000)
                    #expect(events.count == perWriter)
                    #expect(events.allSatisfy { $0.payload.allSatisfy { $0 == UInt8(writer) } })
                }
                #expect(try log.verifyIntegrity().isSound)
            }
        }
    }

    @Test("a reader adopts a map size grown by the writing process")
    func adoptsGrowthByAnotherProcess() async throws {
        try await withTemporaryDirectory { directory in
            let logDirectory = directory + "/log"
            // LMDB records the map size in the file: seed it small, so that the child's growth is what the reader sees.
            try await withLog(logDirectory, configuration: tinyMap, logger: quietLogger) { log in
                _ = try await log.append(tick("seed"))
            }
            var readOnly = tinyMap
            readOnly.readOnly = true
            try await withLog(logDirectory, configuration: readOnly, logger: quietLogger) { reader in
                let sizeBefore = reader.statistics.mapSize
                #expect(try reader.read(from: 1).count == 1)

                let child = try startLogCrashWriter(
                    directory: logDirectory, ackFile: directory + "/acks", writers: 4, eventsPerWriter: 500,
                    tinyMap: true)
                #expect(await child.exited() == 0)

                #expect(reader.head == 2001)
                var count = 0
                try reader.scan { _ in count += 1 }
                #expect(count == 2001)
                #expect(reader.statistics.mapSize >= sizeBefore + 10 * (64 << 10), "the reader took on the grown map")
                #expect(try reader.verifyIntegrity().isSound)
            }
        }
    }
}
