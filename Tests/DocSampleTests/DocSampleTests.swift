import Foundation
import Testing

/// Every Swift sample of README.md, docs/ and the DocC catalogs is code of this target: its lines (but its imports)
/// stand between `// sample` and `// end of sample` in one of the files beside this one, which import what it imports.
/// The build then fails when a sample stops compiling, and this test when the docs' copy and the compiled one part. A
/// block that opens with `// Firebase` or `// Package.swift` shows code of another kind, and is not one.
@Suite("Docs: every Swift sample compiles")
struct DocSampleTests {
    private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// A sample: its imports, and its other lines without their common indentation.
    private struct Sample: Equatable {
        var imports: Set<String> = []
        var lines: [String] = []
    }

    @Test("each sample in README.md, docs/ and the DocC catalogs is one of the samples this target compiles")
    func samplesCompile() throws {
        let compiled = try Self.compiledSamples()
        var documents = ["README.md"]
        let docs = try FileManager.default.contentsOfDirectory(atPath: Self.root.appendingPathComponent("docs").path)
        documents += docs.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
        let sources = FileManager.default.enumerator(atPath: Self.root.appendingPathComponent("Sources").path)
        let catalogs = (sources?.allObjects as? [String] ?? []).filter { $0.contains(".docc/") && $0.hasSuffix(".md") }
        documents += catalogs.sorted().map { "Sources/" + $0 }
        var found = 0
        for document in documents {
            let text = try String(contentsOf: Self.root.appendingPathComponent(document), encoding: .utf8)
            for sample in Self.samples(inMarkdown: text) {
                found += 1
                let match = compiled.first { $0.lines == sample.lines }
                #expect(match != nil, "\(document): a sample no file of Tests/DocSampleTests compiles: \(sample.lines)")
                if let match {
                    #expect(sample.imports.isSubset(of: match.imports), "\(document): imports \(sample.imports)")
                }
            }
        }
        #expect(found >= 10, "the samples of README.md, docs/SDK.md, docs/SWIFT.md and the catalogs were found")
    }

    /// The ```swift blocks of a Markdown text.
    private static func samples(inMarkdown text: String) -> [Sample] {
        var samples: [Sample] = []
        var current: [String]?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if current == nil, line.trimmingCharacters(in: .whitespaces) == "```swift" {
                current = []
            } else if let lines = current, line.trimmingCharacters(in: .whitespaces) == "```" {
                current = nil
                if let first = lines.first, first.hasPrefix("// Firebase") || first.hasPrefix("// Package.swift") {
                    continue
                }
                var sample = Sample()
                sample.imports = Set(lines.filter { $0.hasPrefix("import ") })
                sample.lines = dedented(lines.filter { !$0.hasPrefix("import ") })
                samples.append(sample)
            } else if current != nil {
                current?.append(line)
            }
        }
        return samples
    }

    /// The marked samples of the Swift files of this target, each with its file's imports.
    private static func compiledSamples() throws -> [Sample] {
        let directory = root.appendingPathComponent("Tests/DocSampleTests")
        var samples: [Sample] = []
        for file in try FileManager.default.contentsOfDirectory(atPath: directory.path) where file.hasSuffix(".swift") {
            let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            let imports = Set(lines.filter { $0.hasPrefix("import ") })
            var current: [String]?
            for line in lines {
                switch line.trimmingCharacters(in: .whitespaces) {
                case "// sample": current = []
                case "// end of sample":
                    if let marked = current { samples.append(Sample(imports: imports, lines: dedented(marked))) }
                    current = nil
                default: current?.append(line)
                }
            }
        }
        return samples
    }

    /// `lines` without their common indentation, and without blank lines at either end.
    private static func dedented(_ lines: [String]) -> [String] {
        var lines = lines.map { $0.replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression) }
        while lines.first?.isEmpty == true { lines.removeFirst() }
        while lines.last?.isEmpty == true { lines.removeLast() }
        let indent = lines.filter { !$0.isEmpty }.map { $0.prefix { $0 == " " }.count }.min() ?? 0
        return lines.map { $0.isEmpty ? $0 : String($0.dropFirst(indent)) }
    }
}
