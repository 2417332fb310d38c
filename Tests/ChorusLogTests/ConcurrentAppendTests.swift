import ChorusLog
import ChorusTestSupport
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
}
