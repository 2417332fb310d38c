import ChorusLMDBLog
import ChorusLog
import ChorusTestSupport
import Dispatch
import Synchronization
import Testing

@Suite("Concurrent appends")
struct ConcurrentAppendTests {
    @Test("64 writers append 20,000 events while subscribers follow; each sees 1…20,000 in order")
    func sixtyFourWritersWithSubscribers() async throws {
        try await withTemporaryDirectory { directory in
            try await withLog(directory) { log in
                let total = 20_000
                let writers = 64
                let streams = 16

                // One subscriber follows from before the first append, one joins from the start mid-way (catching up
                // while live appends continue), one joins mid-way from position 5,000.
                func follow(after start: LogPosition) -> Task<[LogPosition], any Error> {
                    Task {
                        var seen: [LogPosition] = []
                        for try await event in log.subscribe(after: start) {
                            seen.append(event.position)
                            if event.position.rawValue == UInt64(total) { break }
                        }
                        return seen
                    }
                }
                let early = follow(after: .start)

                try await withThrowingTaskGroup(of: Void.self) { group in
                    for writer in 0..<writers {
                        group.addTask {
                            let count = total / writers + (writer < total % writers ? 1 : 0)
                            for index in 0..<count {
                                _ = try await log.append(
                                    tick(try StreamID("s-\(writer % streams)"), "\(writer)-\(index)"))
                            }
                        }
                    }
                    while log.head.rawValue < 5_000 { _ = try await log.waitForHead(after: log.head) }
                    let lateFromStart = follow(after: .start)
                    let lateFromMiddle = follow(after: 5_000)
                    try await group.waitForAll()

                    let everything = (1...UInt64(total)).map { LogPosition($0) }
                    #expect(try await early.value == everything)
                    #expect(try await lateFromStart.value == everything)
                    #expect(try await lateFromMiddle.value == Array(everything.dropFirst(5_000)))
                }

                #expect(log.head.rawValue == UInt64(total))
                var versionsPerStream = 0
                for stream in 0..<streams {
                    let events = try log.read(stream: try StreamID("s-\(stream)"), limit: total)
                    #expect(
                        events.map(\.streamVersion) == Array(1...UInt64(events.count)), "stream s-\(stream) is gapless")
                    #expect(events.map(\.position) == events.map(\.position).sorted())
                    versionsPerStream += events.count
                }
                #expect(versionsPerStream == total)
                let statistics = log.statistics
                #expect(statistics.committedAppends == total)
                #expect(statistics.commits < total, "concurrent appends share commits")
                #expect(try log.verifyIntegrity().isSound)
            }
        }
    }

    @Test("racing appends with one expected version: exactly one wins, the rest fail typed and append nothing")
    func expectedVersionRaces() async throws {
        try await withTemporaryDirectory { directory in
            try await withLog(directory) { log in
                let results = await withTaskGroup(of: Result<AppendOutcome, EventLogError>.self) { group in
                    for index in 0..<32 {
                        group.addTask {
                            do {
                                return .success(try await log.append(tick("race", "\(index)", expected: .noStream)))
                            } catch {
                                return .failure(error as! EventLogError)
                            }
                        }
                    }
                    return await group.reduce(into: []) { $0.append($1) }
                }
                #expect(results.count { if case .success = $0 { true } else { false } } == 1)
                for case .failure(let error) in results {
                    #expect(error.code == .wrongExpectedVersion)
                    #expect(error.actualVersion == 1)
                }
                #expect(log.head == 1)

                // Optimistic concurrency: 16 writers each land 10 appends by re-reading the version on conflict.
                let conflicts = try await withThrowingTaskGroup(of: Int.self) { group in
                    for writer in 0..<16 {
                        group.addTask {
                            var conflicts = 0
                            var landed = 0
                            while landed < 10 {
                                let version = try log.streamVersion(of: "counter")
                                // Others read meanwhile, even when the writers share one thread (an append alone is
                                // committed without suspending, so without this they could run one after another).
                                await Task.yield()
                                do {
                                    _ = try await log.append(tick("counter", "\(writer)", expected: .exact(version)))
                                    landed += 1
                                } catch let error as EventLogError where error.code == .wrongExpectedVersion {
                                    conflicts += 1
                                }
                            }
                            return conflicts
                        }
                    }
                    return try await group.reduce(0, +)
                }
                let counter = try log.read(stream: "counter", limit: 1000)
                #expect(counter.map(\.streamVersion) == Array(1...160))
                #expect(log.head.rawValue == 161)
                #expect(conflicts > 0, "16 writers on one stream do conflict")
            }
        }
    }

    @Test("concurrent retries of one command id append once and all get the original positions")
    func commandIDRetries() async throws {
        try await withTemporaryDirectory { directory in
            try await withLog(directory) { log in
                let commands = (0..<10).map { _ in CommandID() }
                let outcomes = try await withThrowingTaskGroup(of: (Int, AppendOutcome).self) { group in
                    for attempt in 0..<40 {
                        let command = attempt % commands.count
                        group.addTask {
                            (
                                command,
                                try await log.append(
                                    tick(
                                        try StreamID("cmd-\(command)"), "attempt \(attempt)", command: commands[command]
                                    ))
                            )
                        }
                    }
                    return try await group.reduce(into: [Int: [AppendOutcome]]()) { $0[$1.0, default: []].append($1.1) }
                }
                #expect(log.head == 10)
                for (command, results) in outcomes {
                    #expect(results.count == 4)
                    #expect(results.count { !$0.isReplay } == 1, "command \(command) appended once")
                    #expect(Set(results.map(\.firstPosition)).count == 1)
                    #expect(try log.read(stream: try StreamID("cmd-\(command)")).count == 1)
                }
            }
        }
    }

    @Test("a lone appender commits on its own thread; appenders that meet a commit under way share one group commit")
    func loneAppenderCommitsItself() async throws {
        try await withTemporaryDirectory { directory in
            try await withLog(directory) { log in
                let stream = StreamID("lone")
                func appendAlone(_ count: Int) async throws {
                    for index in 0..<count { _ = try await log.append(tick(stream, "alone \(index)")) }
                }
                try await appendAlone(100)
                let alone = log.statistics
                #expect(alone.commits == 100)
                // The first may come before the writer thread has started, and wait for it.
                #expect(alone.commitsOnCallerThread >= 99, "no append waited for the writer thread")

                // A rehearsal holds the write transaction until released; 32 appenders meet it.
                let (holding, holdingStarted) = AsyncStream.makeStream(of: Void.self)
                let release = DispatchSemaphore(value: 0)
                let holder = Task {
                    try await log.rehearse(eventCount: 1) { _ in
                        holdingStarted.yield()
                        _ = release.wait(timeout: .now() + 120)
                    }
                }
                for await _ in holding { break }
                let crowd = Task {
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for writer in 0..<32 {
                            group.addTask {
                                _ = try await log.append(tick(try StreamID("crowd-\(writer)"), "crowd"))
                            }
                        }
                        try await group.waitForAll()
                    }
                }
                // All 32 wait in the writer's queue before the transaction is released (however slow the machine; past
                // the holder's own 120 s, they never will, and the test fails instead of waiting for ever).
                let started = ContinuousClock.now
                while log.statistics.waitingAppends < 32, ContinuousClock.now - started < .seconds(120) {
                    try await Task.sleep(for: .milliseconds(10))
                }
                #expect(log.statistics.waitingAppends == 32)
                release.signal()
                try await holder.value
                try await crowd.value
                let met = log.statistics
                #expect(met.committedAppends - alone.committedAppends == 32)
                #expect(met.commits - alone.commits <= 2, "the 32 appenders that met share one commit")
                #expect(met.commitsOnCallerThread == alone.commitsOnCallerThread, "the writer thread committed them")

                try await appendAlone(50)
                let after = log.statistics
                // The first one or two meet the writer thread still finishing the last group.
                #expect(after.commitsOnCallerThread - met.commitsOnCallerThread >= 45, "alone again, it commits itself")
                #expect(log.head == 182)
                #expect(try log.read(stream: stream).map(\.streamVersion) == Array(1...150))
                #expect(try log.verifyIntegrity().isSound)
            }
        }
    }

    @Test("with callers' commits turned off, a lone appender's appends all go through the writer thread")
    func callersCommitWhenAloneOff() async throws {
        try await withTemporaryDirectory { directory in
            var configuration = LMDBEventLog.Configuration()
            configuration.callersCommitWhenAlone = false
            try await withLog(directory, configuration: configuration) { log in
                for index in 0..<30 { _ = try await log.append(tick("handed-over", "\(index)")) }
                #expect(log.statistics.commits == 30)
                #expect(log.statistics.commitsOnCallerThread == 0)
            }
        }
    }

    @Test("closing the log while a lone appender commits: every append is durable or refused, and none hangs")
    func closeDuringLoneAppends() async throws {
        try await withTemporaryDirectory { directory in
            let log = try LMDBEventLog(directory: directory)
            let writer = Task { await log.run() }
            let appender = Task {
                var acknowledged = 0
                let stream = StreamID("closing")
                while true {
                    do {
                        _ = try await log.append(tick(stream, "before close \(acknowledged)"))
                        acknowledged += 1
                    } catch let error as EventLogError {
                        #expect(error.code == .closed)
                        return acknowledged
                    }
                }
            }
            // Closed while it appends: once a few appends are in, whatever the machine's load.
            let started = ContinuousClock.now
            while log.head.rawValue < 5, ContinuousClock.now - started < .seconds(60) {
                try await Task.sleep(for: .milliseconds(10))
            }
            log.close()
            let acknowledged = try await appender.value
            await writer.value
            #expect(acknowledged > 0)
            let reopened = try LMDBEventLog(directory: directory)
            defer { reopened.close() }
            #expect(reopened.head.rawValue == UInt64(acknowledged))
            #expect(try reopened.verifyIntegrity().isSound)
        }
    }
}
