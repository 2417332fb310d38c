import ChorusStorage
import ChorusTestSupport
import Foundation
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

    @Test("a prefix scan sees only the keys that start with the prefix; an append must come after every key")
    func prefixScansAndAppends() async throws {
        try await withTemporaryDirectory { directory in
            let store = try KeyValueStore(directory: directory, tables: ["t"])
            let table = store.table("t")
            try store.write { transaction in
                for key in ["ana\u{0}1", "ana\u{0}2", "anab\u{0}1", "bo\u{0}1"] {
                    try transaction.put([1], for: Array(key.utf8), in: table, append: true)
                }
                #expect(throws: LMDBError.self) {
                    try transaction.put([1], for: Array("ana".utf8), in: table, append: true)
                }
            }
            func keys(_ prefix: String) throws -> [String] {
                try store.read { transaction in
                    var found: [String] = []
                    try transaction.scan(table, prefix: Array(prefix.utf8)) { key, _ in
                        found.append(String(decoding: key, as: UTF8.self))
                        return true
                    }
                    return found
                }
            }
            #expect(try keys("ana\u{0}") == ["ana\u{0}1", "ana\u{0}2"])
            #expect(try keys("ana") == ["ana\u{0}1", "ana\u{0}2", "anab\u{0}1"])
            #expect(try keys("c") == [])
            #expect(try keys("").count == 4)
        }
    }

    @Test(
        "a load in key order ends with what writes in any order would have left; a read meanwhile merges what came before"
    )
    func loadsInKeyOrder() async throws {
        try await withTemporaryDirectory { directory in
            var configuration = KeyValueStoreConfiguration()
            configuration.writesInPlace = true
            let store = try KeyValueStore(
                directory: directory, tables: ["loaded", "other"], configuration: configuration)
            let (loaded, other) = (store.table("loaded"), store.table("other"))
            var generator = SystemRandomNumberGenerator()
            var expected: [[UInt8]: [UInt8]] = [:]
            try store.write { transaction in
                try transaction.loadingInKeyOrder([loaded], spillingInto: directory) { loading in
                    // More than one run's worth (2 MiB), with keys written, overwritten and deleted in random order.
                    for round in 0..<40_000 {
                        let key = Array("key-\(Int.random(in: 0..<15_000, using: &generator))".utf8)
                        if round % 7 == 0 {
                            try loading.delete(key, in: loaded)
                            expected[key] = nil
                        } else {
                            let value =
                                Array("value \(round) ".utf8) + [UInt8](repeating: UInt8(round % 251), count: 60)
                            try loading.put(value, for: key, in: loaded)
                            expected[key] = value
                        }
                        // Reads now and then: each sees every write before it, and the table is no longer empty, so
                        // that later deletes must remove keys it holds.
                        if round == 9_000 || round == 25_000 || round == 25_001 {
                            let probe = Array("key-\(Int.random(in: 0..<15_000, using: &generator))".utf8)
                            #expect(try loading.value(for: probe, in: loaded) == expected[probe])
                            #expect(try loading.count(loaded) == expected.count)
                        }
                    }
                    try loading.put([7], for: [7], in: other)
                    #expect(try loading.value(for: [7], in: other) == [7], "other tables are as usual")
                }
                #expect(throws: LMDBError.self, "only empty tables are loaded") {
                    try transaction.loadingInKeyOrder([loaded], spillingInto: directory) { _ in }
                }
            }
            let stored = try store.read { transaction in
                var entries: [[UInt8]: [UInt8]] = [:]
                try transaction.scan(loaded) { key, value in
                    entries[Array(key)] = Array(value)
                    return true
                }
                return entries
            }
            #expect(stored == expected)
            let left = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".run") }
            #expect(left.isEmpty, "runs removed: \(left)")
        }
    }

    #if os(Linux)
    @Test("while a large write runs, the map's new pages are faulted in ahead of it")
    func prefaultsAheadOfTheWriter() async throws {
        try await withTemporaryDirectory { directory in
            var configuration = KeyValueStoreConfiguration()
            configuration.writesInPlace = true
            let store = try KeyValueStore(directory: directory, tables: ["t"], configuration: configuration)
            let file = URL(fileURLWithPath: directory + "/data.mdb").resolvingSymlinksInPath().path
            let before = residentKilobytes(of: file)
            let during = try store.whilePrefaulting(bytes: 16 << 20) { () -> Int in
                // The writer would be filling pages here; wait until the thread has faulted in most of them.
                let deadline = Date().addingTimeInterval(10)
                while residentKilobytes(of: file) < before + 12 * 1024, Date() < deadline { usleep(10_000) }
                return residentKilobytes(of: file)
            }
            #expect(during >= before + 12 * 1024, "resident before: \(before) kB, during: \(during) kB")
            try store.write { try $0.put([1], for: [1], in: store.table("t")) }
            #expect(try store.read { try $0.value(for: [1], in: store.table("t")) } == [1])
        }
    }

    /// The resident size of this process's mapping of `file`, from `/proc/self/smaps`.
    private func residentKilobytes(of file: String) -> Int {
        // Read to the end: procfs files have no size for Foundation to go by.
        guard let handle = FileHandle(forReadingAtPath: "/proc/self/smaps") else { return 0 }
        defer { try? handle.close() }
        let smaps = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        var inMapping = false
        for line in smaps.split(separator: "\n") {
            if let first = line.first, first.isHexDigit, line.contains("-") {
                inMapping = line.hasSuffix(" " + file)
            } else if inMapping, line.hasPrefix("Rss:") {
                return Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? 0
            }
        }
        return 0
    }
    #endif
}
