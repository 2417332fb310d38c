import ChorusLMDBLog
import ChorusLog
import ChorusTestSupport
import Testing

@Suite("State decided with appends")
struct LogStateTests {
    private static let withState = {
        var configuration = LMDBEventLog.Configuration()
        configuration.stateTables = ["emails"]
        return configuration
    }()

    private struct Taken: Error {}

    /// Claims `email` and appends a registration, in one transaction; throws `Taken` (before writing) otherwise.
    private func register(_ email: String, in log: any EventLog) async throws -> AppendOutcome {
        let emails = StateTable("emails")
        return try await log.append(.durable, eventCount: 1) { batch in
            guard try batch.state.value(for: Array(email.utf8), in: emails) == nil else { throw Taken() }
            let outcome = try batch.append(tick(try StreamID("user-\(email)"), email))
            try batch.state.put(Array("\(outcome.lastPosition)".utf8), for: Array(email.utf8), in: emails)
            return outcome
        }
    }

    @Test("of racing decisions on one key exactly one wins; the others append and write nothing")
    func racingDecisions() async throws {
        try await withTemporaryDirectory { directory in
            try await withLog(directory, configuration: Self.withState) { log in
                let results = await withTaskGroup(of: Bool.self) { group in
                    for _ in 0..<20 {
                        group.addTask { (try? await register("a@example.com", in: log)) != nil }
                    }
                    return await group.reduce(into: [Bool]()) { $0.append($1) }
                }
                #expect(results.count(where: { $0 }) == 1)
                #expect(log.head == 1)
                _ = try await register("b@example.com", in: log)
            }
            try await withLog(directory, configuration: Self.withState) { reopened in
                let (stored, position) = try reopened.readState { state in
                    (
                        try ["a@example.com", "b@example.com", "c@example.com"].map {
                            try state.value(for: Array($0.utf8), in: StateTable("emails")).map {
                                String(decoding: $0, as: UTF8.self)
                            }
                        }, try state.position
                    )
                }
                #expect(stored == ["1", "2", nil], "state committed with its events survives a reopen")
                #expect(position == 2, "the state read is the log folded through its head")
                await #expect(throws: Taken.self) { try await register("a@example.com", in: reopened) }
                #expect(reopened.head == 2)
            }
        }
    }

    @Test("a removal from a state table is known by the time its append is answered; puts and missing keys are not")
    func newestRemoval() async throws {
        let emails = StateTable("emails")
        func change(_ log: any EventLog, _ body: @escaping @Sendable (any StateWriter) throws -> Void) async throws {
            _ = try await log.append(.durable, eventCount: 1) { batch in
                _ = try batch.append(tick(try StreamID("user-x"), "x"))
                try body(batch.state)
            }
        }
        try await withTemporaryDirectory { directory in
            try await withLog(directory, configuration: Self.withState) { log in
                _ = try await register("a@example.com", in: log)
                _ = try await register("b@example.com", in: log)
                #expect(log.newestRemoval(from: emails) == .start, "puts remove nothing")

                try await change(log) { try $0.delete(Array("a@example.com".utf8), in: emails) }
                let removal = log.head
                #expect(log.newestRemoval(from: emails) == removal)
                #expect(log.newestRemoval(from: StateTable("other")) == .start, "another table's removals")

                try await change(log) { try $0.delete(Array("nobody@example.com".utf8), in: emails) }
                #expect(log.newestRemoval(from: emails) == removal, "a key that was not there")

                try await change(log) { state in
                    try state.writeInKeyOrder(in: emails) { write in
                        try Array("b@example.com".utf8).withUnsafeBytes { try write($0, nil) }
                    }
                }
                #expect(log.newestRemoval(from: emails) == log.head, "removed in key order, as an import does")
            }
            try await withLog(directory, configuration: Self.withState) { reopened in
                #expect(reopened.newestRemoval(from: emails) == reopened.head, "what came before the open is unknown")
            }
            var readOnly = Self.withState
            readOnly.readOnly = true
            let reader = try LMDBEventLog(directory: directory, configuration: readOnly)
            defer { reader.close() }
            #expect(reader.newestRemoval(from: emails) == nil, "another process writes: unknowable")
        }
    }
}
