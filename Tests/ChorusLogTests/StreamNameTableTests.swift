import Testing

@testable import ChorusLog

@Suite("Stream names found by their bytes")
struct StreamNameTableTests {
    @Test("names keep their places as the table grows far past the room it was made with")
    func grows() {
        var table = StreamNameTable(capacity: 4)
        func place(_ name: String) -> (place: Int, added: Bool) {
            var name = name
            return name.withUTF8 { table.place(of: $0) }
        }
        let names = (0..<50_000).map { "user-\($0)" }
        for (index, name) in names.enumerated() { #expect(place(name) == (index, true)) }
        #expect(table.count == names.count)
        for (index, name) in names.enumerated().reversed() { #expect(place(name) == (index, false)) }
        #expect(Array(table.names[table.range(of: 12_345)]) == Array("user-12345".utf8))
        #expect(place("") == (names.count, true))
        #expect(place("") == (names.count, false))
    }
}
