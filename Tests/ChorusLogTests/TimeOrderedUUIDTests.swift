import ChorusLog
import Foundation
import Testing

/// Command ids key the log's command index and retries: they must be unique, sort in the order they were made, and
/// carry real randomness, however many are made at once (their random bits are drawn from the system in batches).
@Suite("Time-ordered ids")
struct TimeOrderedUUIDTests {
    @Test("ids made in a row are version 7, strictly increasing, and random past their time and sequence")
    func orderedAndRandom() {
        // Well past one batch of random bits, and past the 4,096 ids one millisecond's sequence holds.
        let ids = (0..<10_000).map { _ in TimeOrderedUUID.make() }
        let bytes = ids.map { id in withUnsafeBytes(of: id.uuid) { [UInt8]($0) } }
        for id in bytes {
            #expect(id[6] >> 4 == 7, "version 7")
            #expect(id[8] >> 6 == 0b10, "RFC 9562 variant")
        }
        #expect(zip(bytes, bytes.dropFirst()).allSatisfy { $0.lexicographicallyPrecedes($1) })
        // The last 8 bytes hold 62 random bits: a repeat among 10,000 would mean the draws repeat.
        let randomParts = Set(bytes.map { $0[8...] })
        #expect(randomParts.count == ids.count)
        let now = UInt64(Date().timeIntervalSince1970 * 1000)
        let first = bytes[0][0..<6].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        // The field may run a little ahead of the clock after a burst of ids (more than 4,096 in a millisecond).
        #expect(first < now + 1_000 && now < first + 60_000, "the first 48 bits are Unix milliseconds")
    }

    @Test("ids made on many threads at once are all different")
    func uniqueAcrossThreads() async {
        let batches = await withTaskGroup(of: [UUID].self) { group in
            for _ in 0..<8 { group.addTask { (0..<2_000).map { _ in TimeOrderedUUID.make() } } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(Set(batches.joined()).count == 16_000)
        for batch in batches { #expect(zip(batch, batch.dropFirst()).allSatisfy { $0.uuidString < $1.uuidString }) }
    }
}
