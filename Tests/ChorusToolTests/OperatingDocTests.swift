import Foundation
import Testing

/// docs/OPERATING.md says what each command's `--help` offers: every option of every command is named in that
/// command's section, so that a new flag cannot land without its line there.
@Suite("Docs: OPERATING.md names every option of every command")
struct OperatingDocTests {
    private static let document = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("docs/OPERATING.md")

    @Test("every option of every command's --help is in the command's section of docs/OPERATING.md")
    func everyOptionIsDocumented() async throws {
        let text = try String(contentsOf: Self.document, encoding: .utf8)
        let commands = try await Self.commands()
        #expect(commands.count >= 20, "the commands were found: \(commands)")
        for command in commands {
            let help = try await runChorus(command + ["--help"])
            #expect(help.status == 0, "chorus \(command.joined(separator: " ")) --help: \(help.standardError)")
            let name = "chorus " + command.joined(separator: " ")
            guard let section = Self.section(naming: name, in: text) else {
                Issue.record("docs/OPERATING.md has no heading naming `\(name)`")
                continue
            }
            for option in Self.options(inHelp: help.standardOutput) where !Self.names(option, in: section) {
                Issue.record("docs/OPERATING.md, `\(name)`: \(option) is not named in its section")
            }
        }
    }

    @Test("the check finds an option missing from a section, and one named only in another section")
    func checkFindsMissingOptions() throws {
        let text = "# Group\n\n`--four`\n\n## `chorus a`\n\n`--one` and `--two-words`.\n\n## `chorus b`\n\n`--three`.\n"
        let section = try #require(Self.section(naming: "chorus a", in: text))
        #expect(Self.names("--four", in: section), "a group's lead holds for its commands")
        #expect(Self.names("--one", in: section) && Self.names("--two-words", in: section))
        #expect(!Self.names("--two", in: section), "a prefix of another option is not the option")
        #expect(!Self.names("--three", in: section))
        #expect(Self.options(inHelp: "  --one <n>   The first; see --three.\n  -h, --help\n") == ["--one"])
    }

    /// Every command that does something: the top level's subcommands, and each group's.
    private static func commands() async throws -> [[String]] {
        var commands: [[String]] = []
        for top in subcommands(inHelp: try await runChorus(["--help"]).standardOutput) {
            let nested = subcommands(inHelp: try await runChorus([top, "--help"]).standardOutput)
            commands += nested.isEmpty ? [[top]] : nested.map { [top, $0] }
        }
        return commands
    }

    /// The names listed under SUBCOMMANDS.
    private static func subcommands(inHelp help: String) -> [String] {
        guard let listed = help.components(separatedBy: "SUBCOMMANDS:").dropFirst().first else { return [] }
        return listed.split(separator: "\n").compactMap { line in
            guard line.hasPrefix("  "), let first = line.dropFirst(2).first, first.isLowercase else { return nil }
            return line.split(separator: " ").first.map(String.init)
        }
    }

    /// The options a help text's OPTIONS list declares (`--help` aside), not those its descriptions mention.
    private static func options(inHelp help: String) -> [String] {
        help.split(separator: "\n").compactMap { line -> String? in
            guard let match = line.firstMatch(of: /^\s+(?:-\w, )?(--[a-z][a-z0-9-]*)/) else { return nil }
            let option = String(match.output.1)
            return option == "--help" ? nil : option
        }
    }

    /// The text from the heading that names `command` (in backquotes) to the next heading as high or higher, and the
    /// lead of each heading above it (up to its first subheading): what a group's lead says holds for each command.
    private static func section(naming command: String, in text: String) -> String? {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        func level(_ line: String) -> Int? {
            guard line.hasPrefix("#"), let space = line.firstIndex(of: " ") else { return nil }
            return line.distance(from: line.startIndex, to: space)
        }
        guard let start = lines.firstIndex(where: { level($0) != nil && $0.contains("`\(command)`") }),
            let own = level(lines[start])
        else { return nil }
        let end = lines[(start + 1)...].firstIndex { level($0).map { $0 <= own } ?? false } ?? lines.endIndex
        var leads: [String] = []
        var above = own
        for index in lines[..<start].indices.reversed() {
            guard let heading = level(lines[index]), heading < above else { continue }
            above = heading
            let leadEnd = lines[(index + 1)...].firstIndex { level($0) != nil } ?? lines.endIndex
            leads.append(lines[index..<leadEnd].joined(separator: "\n"))
        }
        return (leads + [lines[start..<end].joined(separator: "\n")]).joined(separator: "\n")
    }

    /// Whether `section` names `option` whole, not as the start of a longer option.
    private static func names(_ option: String, in section: String) -> Bool {
        section.ranges(of: option).contains { range in
            guard range.upperBound < section.endIndex else { return true }
            let next = section[range.upperBound]
            return !(next.isLetter || next.isNumber || next == "-")
        }
    }
}
