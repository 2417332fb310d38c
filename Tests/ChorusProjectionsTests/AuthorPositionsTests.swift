import Testing

@testable import ChorusProjections

@Suite("Feed derivation's memory of authors")
struct AuthorPositionsTests {
    @Test("answers what was read, reads an author once while within budget, and forgets all when the budget is spent")
    func budget() throws {
        // Each author costs its positions plus 8.
        var memory = AuthorPositions(budget: 40)
        var reads: [String] = []
        func positions(_ author: String, _ count: Int) -> [UInt64] {
            memory.positions(of: Array(author.utf8)) {
                reads.append(author)
                return (0..<UInt64(count)).map { $0 * 10 }
            }
        }
        #expect(positions("a", 10) == (0..<10).map { $0 * 10 })
        #expect(positions("b", 5).count == 5)
        #expect(positions("a", 10).count == 10)
        #expect(reads == ["a", "b"])
        // 18 + 13 held; 18 more is over 40, so a and b are forgotten and c is kept.
        #expect(positions("c", 10).count == 10)
        #expect(positions("c", 10).count == 10)
        #expect(positions("a", 10) == (0..<10).map { $0 * 10 })
        #expect(reads == ["a", "b", "c", "a"])
        // An author larger than the whole budget is answered but never kept, and costs the others nothing.
        #expect(positions("d", 50).count == 50)
        #expect(positions("d", 50).count == 50)
        #expect(positions("c", 10).count == 10)
        #expect(reads == ["a", "b", "c", "a", "d", "d"])
    }
}
