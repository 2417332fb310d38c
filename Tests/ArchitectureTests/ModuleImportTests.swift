import Foundation
import Testing

/// The arrows between modules are the ones docs/ARCHITECTURE.md's module table draws (Scripts/module-table makes it
/// from Package.swift and the imports): a file that imports a module of the package its module's row does not list
/// fails here, so that a new arrow is decided in the table, not slipped into a file.
@Suite("Architecture: the modules' imports")
struct ModuleImportTests {
    private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    private struct Row {
        let module: String
        let folder: String
        let imports: Set<String>
    }

    @Test("every import of a package module is one the module's row allows, and every row's import is used")
    func importsFollowTheTable() throws {
        let rows = try Self.table()
        let modules = Set(rows.map(\.module))
        #expect(rows.count >= 10, "the table was found")
        for row in rows {
            var used: Set<String> = []
            for (file, line, module) in try Self.imports(under: row.folder) where modules.contains(module) {
                used.insert(module)
                #expect(
                    row.imports.contains(module),
                    "\(file):\(line) imports \(module), which \(row.module)'s row in docs/ARCHITECTURE.md does not allow"
                )
            }
            #expect(
                row.imports.isSubset(of: used),
                "\(row.module)'s row lists \(row.imports.subtracting(used).sorted()), which it never imports")
        }
    }

    @Test("every module folder under Sources has its row")
    func everyModuleHasARow() throws {
        let folders = Set(try Self.table().map(\.folder))
        let sources = try FileManager.default.contentsOfDirectory(
            atPath: Self.root.appendingPathComponent("Sources").path)
        for folder in sources.map({ "Sources/" + $0 }) {
            #expect(folders.contains(folder), "\(folder) has no row in docs/ARCHITECTURE.md: run Scripts/module-table")
        }
    }

    /// The rows of the generated module table.
    private static func table() throws -> [Row] {
        let text = try String(contentsOf: root.appendingPathComponent("docs/ARCHITECTURE.md"), encoding: .utf8)
        guard let begin = text.range(of: "<!-- modules: generated"), let end = text.range(of: "<!-- modules: end -->")
        else { throw TableMissing() }
        return text[begin.upperBound..<end.lowerBound].split(separator: "\n").compactMap { line in
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard cells.count == 6, cells[1].hasPrefix("`") else { return nil }
            let names = cells[4].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            return Row(
                module: cells[1].trimmingCharacters(in: ["`"]), folder: cells[2].trimmingCharacters(in: ["`"]),
                imports: Set(names.filter { !$0.isEmpty }.map { $0.trimmingCharacters(in: ["`"]) }))
        }
    }

    private struct TableMissing: Error, CustomStringConvertible {
        var description: String { "docs/ARCHITECTURE.md has no generated module table" }
    }

    /// Every `import` of the Swift files under `folder`: the file, the line and the module.
    private static func imports(under folder: String) throws -> [(String, Int, String)] {
        let directory = root.appendingPathComponent(folder)
        guard let files = FileManager.default.enumerator(atPath: directory.path) else { return [] }
        let pattern = try Regex(
            #"^\s*(?:@\w+\s+)*(?:public |package |internal |private |fileprivate )?import\s+(?:(?:struct|class|enum|protocol|func|var|let|typealias)\s+)?(\w+)"#
        )
        var found: [(String, Int, String)] = []
        for case let file as String in files where file.hasSuffix(".swift") {
            let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                if let match = try pattern.firstMatch(in: String(line)), let module = match.output[1].substring {
                    found.append(("\(folder)/\(file)", index + 1, String(module)))
                }
            }
        }
        return found
    }
}
