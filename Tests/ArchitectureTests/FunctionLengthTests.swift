import Foundation
import Testing

/// No function, initialiser or subscript in `Sources`, `Projections` or `Tools` (generated code aside) runs past 80
/// lines, from its declaration to its closing brace: past that, a function holds more than one idea.
@Suite("Architecture: the length of functions")
struct FunctionLengthTests {
    private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    private static let limit = 80

    @Test("no function in Sources, Projections or Tools is longer than 80 lines")
    func functionsAreShort() throws {
        var files = 0
        var long: [String] = []
        for folder in ["Sources", "Projections", "Tools"] {
            let base = Self.root.appendingPathComponent(folder)
            let paths = FileManager.default.enumerator(atPath: base.path)?.compactMap { $0 as? String } ?? []
            for path in paths where path.hasSuffix(".swift") && !path.contains("Generated/") {
                files += 1
                let text = try String(contentsOf: base.appendingPathComponent(path), encoding: .utf8)
                long += Self.longFunctions(in: text).map { "\(folder)/\(path):\($0.line) is \($0.length) lines" }
            }
        }
        #expect(files > 100, "the sources were found")
        #expect(long.isEmpty, "functions over \(Self.limit) lines: \(long.joined(separator: "; "))")
    }

    @Test("the measure finds a function of 81 lines and passes one of 80, braces in strings and comments aside")
    func measureFindsLongFunctions() {
        func function(lines: Int) -> String {
            let body = (0..<(lines - 2)).map { "    let x\($0) = \"{\" // }" }
            return (["func f() {"] + body + ["}"]).joined(separator: "\n")
        }
        #expect(Self.longFunctions(in: function(lines: 81)).map(\.length) == [81])
        #expect(Self.longFunctions(in: function(lines: 80)).isEmpty)
        let multiline = "init() {\n    let sql = \"\"\"\n    }\n    \"\"\"\n" + function(lines: 81) + "\n}"
        #expect(Self.longFunctions(in: multiline).map(\.length) == [86, 81])
    }

    /// The functions of `text` longer than the limit: the line each starts on (from 1) and its length.
    private static func longFunctions(in text: String) -> [(line: Int, length: Int)] {
        let lines = code(of: text)
        var found: [(line: Int, length: Int)] = []
        for (start, line) in lines.enumerated() where line.contains(/\b(func|init|subscript)\b[^=]*[({]/) {
            var depth = 0
            var opened = false
            var end = start
            scan: while end < lines.count {
                for character in lines[end] {
                    if character == "{" {
                        depth += 1
                        opened = true
                    } else if character == "}" {
                        depth -= 1
                    }
                }
                if opened && depth <= 0 { break scan }
                // A declaration without a body (a protocol's) opens none within a few lines.
                if !opened && end - start > 15 { break scan }
                end += 1
            }
            let length = end - start + 1
            if opened, length > limit { found.append((start + 1, length)) }
        }
        return found
    }

    /// The lines of `text` with string literals and comments blanked, so that only the code's braces count.
    private static func code(of text: String) -> [String] {
        var inMultilineString = false
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            if line.contains("\"\"\"") {
                let quotes = line.ranges(of: "\"\"\"").count
                defer { if quotes % 2 == 1 { inMultilineString.toggle() } }
                return inMultilineString ? "" : String(line.prefix(upTo: line.range(of: "\"\"\"")!.lowerBound))
            }
            if inMultilineString { return "" }
            let withoutStrings = String(line).replacing(/"(\\.|[^"\\])*"/, with: "\"\"")
            guard let comment = withoutStrings.range(of: "//") else { return withoutStrings }
            return String(withoutStrings[..<comment.lowerBound])
        }
    }
}
