import Foundation
import Testing

/// A demo log of `events` events made in `<root>/a` and exported to `<root>/a.jsonl`; returns the export's path.
func exportedDemoLog(in root: String, events: Int, seed: Int) throws -> String {
    let demo = try runChorus(["demo", "--data", root + "/a", "--events", String(events), "--seed", String(seed)])
    try #require(demo.status == 0, "\(demo.standardError)")
    let export = root + "/a.jsonl"
    try #require(try runChorus(["log", "export", "--data", root + "/a", "--output", export]).status == 0)
    return export
}

/// An empty data directory at `path` holding the keys of the data directory `source`: the sealed personal fields of
/// `source`'s export open with them.
func dataDirectoryForImport(at path: String, keysOf source: String) throws {
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    try FileManager.default.copyItem(atPath: source + "/keys", toPath: path + "/keys")
}
