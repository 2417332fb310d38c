import ChorusLMDBLog
import ChorusLog
import ChorusStorage
import ChorusTestSupport
import Foundation
import Logging
import Testing

@Suite("Appending and reading")
struct AppendAndReadTests {
    @Test("positions start at 1 and the envelope comes back as appended")
    func envelopeRoundTrip() async throws {
        try await withTemporaryDirectory { directory in
            try await withLog(directory) { log in
                #expect(log.head == .start)
                let command = CommandID()
                let correlation = CorrelationID()
                let before = EventTime.now
                let outcome = try await log.append(
                    AppendRequest(
                        stream: "user-1", expectedVersion: .noStream,
                        events: [
                            NewEvent(
                                type: "UserRegistered", schemaVersion: 3, payload: Array("{\"name\":\"김민수\"}".utf8)),
                            NewEvent(type: "ProfileEdited", payload: []),
                        ],
                        commandID: command, correlationID: correlation, actor: "user-1"))
                #expect(outcome == AppendOutcome(firstPosition: 1, lastPosition: 2, streamVersion: 2, isReplay: false))
                #expect(log.head == 2)

                let events = try log.read(from: 1)
                #expect(events.map(\.position) == [1, 2])
                let first = try #require(events.first)
                #expect(first.stream == "user-1")
                #expect(first.streamVersion == 1)
                #expect(first.type == "UserRegistered")
                #expect(first.schemaVersion == 3)
                #expect(first.text == "{\"name\":\"김민수\"}")
                #expect(first.commandID == command)
                #expect(first.correlationID == correlation)
                #expect(first.actor == "user-1")
                #expect(first.recordedAt >= EventTime(millisecondsSince1970: before.millisecondsSince1970))
                #expect(events[1].streamVersion == 2)
                #expect(events[1].payload.isEmpty)
                #expect(events[1].recordedAt == first.recordedAt)
            }
        }
    }

    @Test("the stored size a benchmark's raw baseline copies is the size of the record the log stores")
    func storedSize() async throws {
        try await withTemporaryDirectory { directory in
            try await withLog(directory) { log in
                let request = tick("스트림-7", String(repeating: "x", count: 200))
                _ = try await log.append(request)
                let stored = try #require(try log.event(at: 1)).record
                let size = LMDBEventLog.storedSize(of: request.events[0], stream: request.stream, actor: request.actor)
                #expect(size.record == stored.count)
            }
        }
    }

    @Test("reads walk forward and backward from a position, and through one stream")
    func readsInBothDirections() async throws {
        try await withTemporaryDirectory { directory in
            try await withLog(directory) { log in
                for index in 1...10 {
                    _ = try await log.append(tick(index.isMultiple(of: 2) ? "even" : "odd", "event \(index)"))
                }
                #expect(try log.read(from: 4, limit: 3).map(\.position) == [4, 5, 6])
                #expect(try log.read(from: 4, direction: .backward, limit: 3).map(\.position) == [4, 3, 2])
                #expect(try log.read(from: 99, direction: .backward, limit: 2).map(\.position) == [10, 9])
                #expect(try log.read(from: 11).isEmpty)
                #expect(try log.read(from: 0, limit: 1).map(\.position) == [1])

                let even = try log.read(stream: "even")
                #expect(even.map(\.streamVersion) == [1, 2, 3, 4, 5])
                #expect(even.map(\.position) == [2, 4, 6, 8, 10])
                #expect(try log.read(stream: "even", fromVersion: 4).map(\.text) == ["event 8", "event 10"])
                #expect(try log.read(stream: "odd", fromVersion: 3, direction: .backward).map(\.position) == [5, 3, 1])
                #expect(
                    try log.read(stream: "odd", fromVersion: 99, direction: .backward, limit: 1).map(\.position) == [9])
                #expect(try log.read(stream: "od").isEmpty, "a stream's prefix is not the stream")
                #expect(try log.streamVersion(of: "odd") == 5)
                #expect(try log.streamVersion(of: "none") == 0)

                var scanned: [LogPosition] = []
                try log.scan(from: 3, through: 7, chunkSize: 2) { scanned.append($0.position) }
                #expect(scanned == [3, 4, 5, 6, 7])
            }
        }
    }

    @Test("a wrong expected version is a typed error and appends nothing")
    func expectedVersion() async throws {
        try await withTemporaryDirectory { directory in
            try await withLog(directory) { log in
                _ = try await log.append(tick("account", expected: .noStream))
                _ = try await log.append(tick("account", expected: .exact(1)))

                let again = await #expect(throws: EventLogError.self) {
                    try await log.append(tick("account", expected: .noStream))
                }
                #expect(again?.code == .wrongExpectedVersion)
                #expect(again?.actualVersion == 2)
                #expect(again?.stream == "account")
                let stale = await #expect(throws: EventLogError.self) {
                    try await log.append(tick("account", expected: .exact(1)))
                }
                #expect(stale?.code == .wrongExpectedVersion)
                #expect(log.head == 2)
                #expect(try log.read(from: 1).count == 2)

                let exact = try await log.append(tick("account", expected: .exact(2)))
                #expect(exact.firstPosition == 3 && exact.streamVersion == 3)
                _ = try await log.append(tick("other", expected: .exact(0)))
            }
        }
    }

    @Test("a repeated command id returns the original positions and appends nothing")
    func commandIDReplay() async throws {
        try await withTemporaryDirectory { directory in
            try await withLog(directory) { log in
                let command = CommandID()
                let first = try await log.append(tick("s", "first", command: command))
                _ = try await log.append(tick("s", "between"))
                let retry = try await log.append(tick("s", "retried", expected: .noStream, command: command))
                #expect(retry == AppendOutcome(firstPosition: 1, lastPosition: 1, streamVersion: 1, isReplay: true))
                #expect(first.isReplay == false)
                #expect(log.head == 2)
                #expect(try log.read(from: 1).map(\.text) == ["first", "between"])
            }
        }
    }

    @Test("malformed appends are refused with a clear error and append nothing")
    func invalidAppends() async throws {
        try await withTemporaryDirectory { directory in
            try await withLog(directory) { log in
                let empty = await #expect(throws: EventLogError.self) {
                    try await log.append(AppendRequest(stream: "s", events: []))
                }
                #expect(empty?.code == .invalidAppend)
                let huge = await #expect(throws: EventLogError.self) {
                    try await log.append(
                        AppendRequest(
                            stream: "s",
                            events: [
                                NewEvent(
                                    type: "Big", payload: [UInt8](repeating: 1, count: NewEvent.maximumPayloadSize + 1))
                            ]))
                }
                #expect(huge?.code == .invalidAppend)
                let untyped = await #expect(throws: EventLogError.self) {
                    try await log.append(AppendRequest(stream: "s", events: [NewEvent(type: "", payload: [])]))
                }
                #expect(untyped?.code == .invalidAppend)
                // Passed as String values: a literal argument would pick the literal initializer instead.
                for invalid in ["a\u{0}b", "", String(repeating: "x", count: 201)] as [String] {
                    #expect(throws: EventLogError.self) { try StreamID(invalid) }
                }
                #expect(log.head == .start)
            }
        }
    }

    @Test("a reopened log keeps its events and continues gapless, with time never going backwards")
    func reopen() async throws {
        try await withTemporaryDirectory { directory in
            try await withLog(directory) { log in
                for index in 1...5 { _ = try await log.append(tick("s", "\(index)")) }
            }
            try await withLog(directory) { log in
                #expect(log.head == 5)
                let next = try await log.append(tick("s", "6", expected: .exact(5)))
                #expect(next.firstPosition == 6)
                let times = try log.read(from: 1).map(\.recordedAt)
                #expect(times == times.sorted())
                #expect(try log.verifyIntegrity().isSound)
            }
        }
    }

    @Test("one process writes a log at a time; a read-only log refuses appends")
    func writerLockAndReadOnly() async throws {
        try await withTemporaryDirectory { directory in
            try await withLog(directory) { log in
                _ = try await log.append(tick("s"))
                let second = #expect(throws: EventLogError.self) { try LMDBEventLog(directory: directory) }
                #expect(second?.code == .locked)

                var readOnly = LMDBEventLog.Configuration()
                readOnly.readOnly = true
                let reader = try LMDBEventLog(directory: directory, configuration: readOnly)
                #expect(reader.head == 1)
                _ = try await log.append(tick("s"))
                #expect(reader.head == 2, "a read-only log sees the writer's commits")
                let refused = await #expect(throws: EventLogError.self) { try await reader.append(tick("s")) }
                #expect(refused?.code == .readOnly)
                reader.close()
            }
            let reopened = try LMDBEventLog(directory: directory)
            reopened.close()
        }
    }

    @Test("opening for writing waits a moment for a lock just let go, as a child being spawned can hold it briefly")
    func writerLockPatience() async throws {
        try await withTemporaryDirectory { directory in
            let first = try LMDBEventLog(directory: directory)
            let closer = Thread {
                usleep(150_000)
                first.close()
            }
            closer.start()
            let second = try LMDBEventLog(directory: directory)
            #expect(second.head == 0)
            second.close()
        }
    }

    @Test("storage failures carry LMDB's code, message and context")
    func storageErrors() async throws {
        try await withTemporaryDirectory { directory in
            var readOnly = LMDBEventLog.Configuration()
            readOnly.readOnly = true
            let missing = #expect(throws: EventLogError.self) {
                try LMDBEventLog(directory: directory + "/missing", configuration: readOnly)
            }
            #expect(missing?.code == .storage)
            let cause = try #require(missing?.underlying as? LMDBError)
            #expect(cause.code == .noSuchFile)
            #expect(cause.operation.contains("mdb_env_open"))
            #expect(!cause.message.isEmpty)

            let file = directory + "/a-file"
            _ = FileManager.default.createFile(atPath: file, contents: Data("x".utf8))
            let notADirectory = #expect(throws: EventLogError.self) { try LMDBEventLog(directory: file) }
            #expect(notADirectory?.code == .storage)
        }
    }

    /// A full disk can stop the very first writes to a new log: the file then holds LMDB's own pages and no tables, or
    /// the tables and no storage format. `chorus log verify` opens it read-only; it once failed with EACCES (a
    /// read-only open tried to stamp the format).
    @Test("a log whose first writes never finished: with no tables, a read-only open says so; with tables, it is empty")
    func unfinishedCreation() async throws {
        try await withTemporaryDirectory { directory in
            var readOnly = LMDBEventLog.Configuration()
            readOnly.readOnly = true
            func environment(at path: String, databases: [String]) throws {
                let configuration = LMDBEnvironment.Configuration(
                    initialMapSize: 1 << 20, maximumMapGrowthStep: 1 << 20, maximumMapSize: 1 << 24,
                    maximumReaders: 8, readOnly: false, preparesFileSpace: false)
                try LMDBEnvironment(
                    path: path, configuration: configuration, databases: databases.map { .init(name: $0) },
                    logger: Logger(label: "test")
                ).close()
            }

            try environment(at: directory + "/bare", databases: [])
            let bare = #expect(throws: EventLogError.self) {
                try LMDBEventLog(directory: directory + "/bare", configuration: readOnly)
            }
            #expect(bare?.message.contains("holds no log") == true, "\(String(describing: bare))")

            try environment(
                at: directory + "/unstamped", databases: ["stream-index", "stream-heads", "commands", "meta"])
            let reader = try LMDBEventLog(directory: directory + "/unstamped", configuration: readOnly)
            #expect(reader.head == .start)
            #expect(try reader.verifyIntegrity().isSound)
            reader.close()
            // Opened for writing, it is made whole and takes appends.
            try await withLog(directory + "/unstamped") { log in
                let first = try await log.append(tick("s"))
                #expect(first.firstPosition == 1)
            }
        }
    }
}
