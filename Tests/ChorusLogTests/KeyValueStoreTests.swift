import ChorusLog
import ChorusTestSupport
import Testing

@Suite("Key-value store")
struct KeyValueStoreTests {
    @Test("tables hold what was written; scans walk keys in order both ways; read transactions refuse writes")
    func tablesAndScans() async throws {
        try await withTemporaryDirectory { directory in
            let store = try KeyValueStore(directory: directory, tables: ["a", "b"])
            let a = store.table("a")
            let b = store.table("b")
            try store.write { transaction in
                for key in ["k1", "k3", "k2", "x"] {
                    try transaction.put(Array("value of \(key)".utf8), for: Array(key.utf8), in: a)
                }
                try transaction.put([1], for: [1], in: b)
            }
            try store.read { transaction in
                #expect(try transaction.value(for: Array("k2".utf8), in: a) == Array("value of k2".utf8))
                #expect(try transaction.value(for: Array("nope".utf8), in: a) == nil)
                #expect(try transaction.count(a) == 4)
                #expect(try transaction.count(b) == 1)
                var forward: [String] = []
                try transaction.scan(a, from: Array("k2".utf8)) { key, _ in
                    forward.append(String(decoding: key, as: UTF8.self))
                    return forward.count < 2
                }
                #expect(forward == ["k2", "k3"])
                var backward: [String] = []
                try transaction.scan(a, from: Array("k25".utf8), direction: .backward) { key, _ in
                    backward.append(String(decoding: key, as: UTF8.self))
                    return true
                }
                #expect(backward == ["k2", "k1"])
                #expect(throws: LMDBError.self) { try transaction.put([0], for: [0], in: a) }
            }
            try store.write { transaction in
                #expect(try transaction.delete(Array("k1".utf8), in: a))
                #expect(try !transaction.delete(Array("k1".utf8), in: a))
                try transaction.removeAll(in: b)
            }
            #expect(try store.read { try ($0.count(a), $0.count(b)) } == (3, 0))
        }
    }
}

@Suite("Sorted sets")
struct SortedSetTests {
    private func bytes(_ value: UInt64) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }

    @Test("elements keep sorted per key; repeats and absent removals change nothing; scans start anywhere both ways")
    func setsKeepSortedElements() async throws {
        try await withTemporaryDirectory { directory in
            let store = try KeyValueStore(
                directory: directory, tables: [StoreTableDefinition("sets", layout: .sortedSets(elementSize: 8))])
            let sets = store.table("sets")
            let ana = Array("ana".utf8)
            let bo = Array("bo".utf8)
            func elements(_ key: [UInt8], from start: UInt64? = nil, _ direction: ReadDirection) throws -> [UInt64] {
                try store.read { transaction in
                    var found: [UInt64] = []
                    let visit = { (element: UnsafeRawBufferPointer) -> Bool in
                        found.append(UInt64(bigEndian: element.loadUnaligned(as: UInt64.self)))
                        return true
                    }
                    try key.withUnsafeBytes { key in
                        if let start {
                            try bytes(start).withUnsafeBytes {
                                try transaction.scanSet(key, in: sets, from: $0, direction: direction, visit)
                            }
                        } else {
                            try transaction.scanSet(key, in: sets, direction: direction, visit)
                        }
                    }
                    return found
                }
            }
            try store.write { transaction in
                for (key, value) in [(ana, 30), (ana, 10), (bo, 5), (ana, 20), (ana, 40)] as [([UInt8], UInt64)] {
                    let inserted = try key.withUnsafeBytes { key in
                        try bytes(value).withUnsafeBytes { try transaction.insert($0, intoSet: key, in: sets) }
                    }
                    #expect(inserted)
                }
                try ana.withUnsafeBytes { key throws in
                    try bytes(20).withUnsafeBytes { twenty throws in
                        #expect(try !transaction.insert(twenty, intoSet: key, in: sets), "a repeat is no change")
                        #expect(try !transaction.insert(twenty, intoSet: key, in: sets, append: true), "not past 40")
                        #expect(try transaction.remove(twenty, fromSet: key, in: sets))
                        #expect(try !transaction.remove(twenty, fromSet: key, in: sets), "already gone")
                    }
                }
            }
            #expect(try elements(ana, .forward) == [10, 30, 40])
            #expect(try elements(ana, .backward) == [40, 30, 10])
            #expect(try elements(ana, from: 35, .backward) == [30, 10])
            #expect(try elements(ana, from: 30, .backward) == [30, 10])
            #expect(try elements(ana, from: 99, .backward) == [40, 30, 10])
            #expect(try elements(ana, from: 5, .backward) == [])
            #expect(try elements(ana, from: 11, .forward) == [30, 40])
            #expect(try elements(bo, .backward) == [5])
            #expect(try elements(Array("nobody".utf8), .backward) == [])
            #expect(try store.read { try $0.count(sets) } == 4)
        }
    }
}

@Suite("State decided with appends")
struct LogStateTests {
    private static let withState = {
        var configuration = EventLogConfiguration()
        configuration.stateTables = ["emails"]
        return configuration
    }()

    private struct Taken: Error {}

    /// Claims `email` and appends a registration, in one transaction; throws `Taken` (before writing) otherwise.
    private func register(_ email: String, in log: EventLog) async throws -> AppendOutcome {
        let emails = log.stateTable("emails")
        return try await log.perform { batch in
            guard try batch.state.value(for: Array(email.utf8), in: emails) == nil else { throw Taken() }
            let outcome = try batch.append(tick(try StreamID("user-\(email)"), email))
            try batch.state.put(Array("\(outcome.lastPosition)".utf8), for: Array(email.utf8), in: emails)
            return outcome
        }
    }

    @Test("of racing decisions on one key exactly one wins; the others append and write nothing")
    func racingDecisions() async throws {
        try await withTemporaryDirectory { directory in
            let log = try EventLog(directory: directory, configuration: Self.withState)
            let results = await withTaskGroup(of: Bool.self) { group in
                for _ in 0..<20 {
                    group.addTask { (try? await register("a@example.com", in: log)) != nil }
                }
                return await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(results.count(where: { $0 }) == 1)
            #expect(log.head == 1)
            _ = try await register("b@example.com", in: log)
            log.close()

            let reopened = try EventLog(directory: directory, configuration: Self.withState)
            defer { reopened.close() }
            let emails = reopened.stateTable("emails")
            let stored = try reopened.readState { transaction in
                try ["a@example.com", "b@example.com", "c@example.com"].map {
                    try transaction.value(for: Array($0.utf8), in: emails).map { String(decoding: $0, as: UTF8.self) }
                }
            }
            #expect(stored == ["1", "2", nil], "state committed with its events survives a reopen")
            await #expect(throws: Taken.self) { try await register("a@example.com", in: reopened) }
            #expect(reopened.head == 2)
        }
    }
}
