import Foundation
import Testing

/// A demo log of `events` events made in `<root>/a` and exported to `<root>/a.jsonl`; returns the export's path.
func exportedDemoLog(in root: String, events: Int, seed: Int) async throws -> String {
    let demo = try await runChorus(["demo", "--data", root + "/a", "--events", String(events), "--seed", String(seed)])
    try #require(demo.status == 0, "\(demo.standardError)")
    let export = root + "/a.jsonl"
    try #require(try await runChorus(["log", "export", "--data", root + "/a", "--output", export]).status == 0)
    return export
}

/// An empty data directory at `path` holding the keys of the data directory `source`: the sealed personal fields of
/// `source`'s export open with them.
func dataDirectoryForImport(at path: String, keysOf source: String) throws {
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    try FileManager.default.copyItem(atPath: source + "/keys", toPath: path + "/keys")
}

/// The lines of the export at `path`, without their newlines.
func exportLines(_ path: String) throws -> [String] {
    try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
}

/// Writes `lines` as an export at `path`, each ended by a newline.
func writeExport(_ lines: [String], to path: String) throws {
    try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
}
