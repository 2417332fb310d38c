import ChorusStorage
import ChorusTestSupport
import Foundation
import Testing

@Suite("compactable store")
struct CompactableStoreTests {
    @Test("compacting keeps every entry, leaves the deleted bytes in no file, and the store goes on taking writes")
    func compact() async throws {
        try await withTemporaryDirectory { root in
            let directory = root + "/store"
            let store = try CompactableStore(directory: directory, tables: ["t"])
            let table = store.table("t")
            let marker = Array("deleted-marker-6f1c".utf8)
            try store.write { transaction in
                for index in 0..<200 {
                    try transaction.put(marker + Array("\(index)".utf8), for: Array("gone-\(index)".utf8), in: table)
                }
                try transaction.put(Array("kept".utf8), for: Array("kept".utf8), in: table)
            }
            try store.write { transaction in
                for index in 0..<200 { _ = try transaction.delete(Array("gone-\(index)".utf8), in: table) }
            }
            let file = directory + "/data.mdb"
            func holdsMarker() throws -> Bool {
                let bytes = try #require(FileManager.default.contents(atPath: file))
                return bytes.range(of: Data(marker)) != nil
            }
            #expect(try holdsMarker(), "freed pages keep what was deleted")
            try store.compact()
            #expect(try !holdsMarker())
            #expect(try store.read { try $0.value(for: Array("kept".utf8), in: table) } == Array("kept".utf8))
            try store.write { try $0.put([1], for: Array("after".utf8), in: table) }
            #expect(try store.read { try $0.value(for: Array("after".utf8), in: table) } == [1])
            #expect(!FileManager.default.fileExists(atPath: directory + ".compacting"))
            store.close()
        }
    }

    @Test("a store open elsewhere is not compacted under it: the compaction is refused until the other open closes")
    func openElsewhere() async throws {
        try await withTemporaryDirectory { root in
            let directory = root + "/store"
            let store = try CompactableStore(directory: directory, tables: ["t"])
            let table = store.table("t")
            try store.write { try $0.put([1], for: Array("kept".utf8), in: table) }
            // Another process's open, as far as flock tells: each open has a lock of its own.
            let other = try CompactableStore(directory: directory, tables: ["t"])
            #expect(throws: StoreInUseError.self) { try store.compact() }
            #expect(throws: StoreInUseError.self) { try other.compact() }
            #expect(try other.read { try $0.value(for: Array("kept".utf8), in: other.table("t")) } == [1])
            other.close()
            try store.compact()
            try store.write { try $0.put([2], for: Array("after".utf8), in: table) }
            #expect(try store.read { try $0.value(for: Array("after".utf8), in: table) } == [2])
            store.close()
            let reopened = try CompactableStore(directory: directory, tables: ["t"])
            #expect(try reopened.read { try $0.value(for: Array("kept".utf8), in: reopened.table("t")) } == [1])
            reopened.close()
        }
    }
}
