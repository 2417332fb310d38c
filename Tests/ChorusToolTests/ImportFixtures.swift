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

/// Writes `lines` as an export and imports it into a new data directory, `root/b`, holding the keys of `root/a`, in
/// batches of 512 events: a refusal then comes while later batches are being read and decoded.
func importInSmallBatches(_ lines: [String], in root: String) async throws -> ChorusRun {
    let path = root + "/changed.jsonl"
    try writeExport(lines, to: path)
    try dataDirectoryForImport(at: root + "/b", keysOf: root + "/a")
    return try await runChorus(["log", "import", "--data", root + "/b", path, "--batch-events", "512"])
}

/// Where the log of the data directory `data` ends, once `chorus log verify` has found it sound.
func verifiedHead(of data: String) async throws -> Int? {
    let verify = try await runChorus(["log", "verify", "--data", data, "--json"])
    #expect(verify.status == 0, "\(verify.standardOutput)")
    return try lastJSONLine(verify.standardOutput)["head"] as? Int
}
