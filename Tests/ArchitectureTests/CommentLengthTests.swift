import Foundation
import Testing

/// An inline comment (`//`, not documentation's `///`) says why in a line or two: a longer one is an essay that belongs
/// in the commit's body, docs/ARCHITECTURE.md or BENCHMARKS.md.
@Suite("Architecture: the length of inline comments")
struct CommentLengthTests {
    private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    @Test("no inline comment in Sources, Projections or Tools runs past two lines")
    func inlineCommentsAreShort() throws {
        var files = 0
        var long: [String] = []
        for folder in ["Sources", "Projections", "Tools"] {
            let base = Self.root.appendingPathComponent(folder)
            let paths = FileManager.default.enumerator(atPath: base.path)?.compactMap { $0 as? String } ?? []
            for path in paths where path.hasSuffix(".swift") && !path.contains("Generated/") {
                files += 1
                let text = try String(contentsOf: base.appendingPathComponent(path), encoding: .utf8)
                long += Self.longComments(in: text).map { "\(folder)/\(path):\($0)" }
            }
        }
        #expect(files > 100, "the sources were found")
        #expect(long.isEmpty, "inline comments over two lines: \(long.joined(separator: ", "))")
    }

    @Test("the check finds three lines of `//` and passes two, and documentation of any length")
    func checkFindsLongComments() {
        #expect(Self.longComments(in: "let a = 1\n// one\n// two\n// three\nlet b = 2") == [2])
        #expect(Self.longComments(in: "// one\n// two\nlet b = 2").isEmpty)
        #expect(Self.longComments(in: "/// one\n/// two\n/// three\nfunc f() {}").isEmpty)
    }

    /// The lines (from 1) where runs of more than two `//` lines start.
    private static func longComments(in text: String) -> [Int] {
        var starts: [Int] = []
        var run = 0
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        for (index, line) in lines.enumerated() {
            let trimmed = line.drop { $0 == " " }
            if trimmed.hasPrefix("//") && !trimmed.hasPrefix("///") {
                run += 1
                if run == 3 { starts.append(index - 1) }
            } else {
                run = 0
            }
        }
        return starts
    }
}
