import ChorusStorage
import ChorusText
import Testing

@Suite("Key order")
struct KeyOrderTests {
    @Test("keys sorted by their prefixes first, then compared, sort as LMDB keeps them")
    func prefixesAgreeWithTheKeyOrder() {
        var generator = SystemRandomNumberGenerator()
        // Ids that share their first bytes and differ past the prefix's 24, short keys, keys that begin others, and
        // zero bytes (a short key's prefix is padded with them).
        let stems: [[UInt8]] = [
            Array("01m8fqvsnne00v7zgx3n5xp3".utf8), Array("01m8fqvsnne00v7zgx3n5xp4".utf8), Array("user-01".utf8), [],
            [0], [0, 0], [255],
        ]
        var keys: [[UInt8]] = []
        for _ in 0..<2_000 {
            let stem = stems.randomElement(using: &generator)!
            let tail = (0..<Int.random(in: 0...6, using: &generator)).map { _ in
                [0, 1, 0x30, 0x7a, 255].randomElement(using: &generator)! as UInt8
            }
            keys.append(stem + tail)
        }
        let expected = keys.sorted(by: KeyOrder.precedes)
        let byPrefix = keys.map { key in (key.withUnsafeBytes { KeyOrder.Prefix($0) }, key) }
            .sorted { a, b in a.0 != b.0 ? a.0 < b.0 : KeyOrder.precedes(a.1, b.1) }
            .map(\.1)
        let misplaced = expected.indices.first { byPrefix[$0] != expected[$0] }
        #expect(misplaced == nil, "first misplaced: \(misplaced.map { byPrefix[$0] } ?? [])")
        // In LMDB's order the prefixes never go back: where two differ, they order their keys.
        for (left, right) in zip(expected, expected.dropFirst()) {
            let prefixes = (left.withUnsafeBytes { KeyOrder.Prefix($0) }, right.withUnsafeBytes { KeyOrder.Prefix($0) })
            #expect(!(prefixes.1 < prefixes.0), "\(left) before \(right)")
        }
    }
}
