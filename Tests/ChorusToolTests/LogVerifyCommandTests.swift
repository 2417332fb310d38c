import ChorusBackend
import ChorusDomain
import ChorusLog
import ChorusTestSupport
import Foundation
import Testing

@Suite("chorus log verify")
struct LogVerifyCommandTests {
    @Test("a sound log passes; a flipped byte is found at its position, and a replay stops at it; so is a lying state")
    func verify() async throws {
        try await withTemporaryDirectory { root in
            let original = root + "/original"
            let made = try await runChorus(["demo", "--data", original, "--events", "2000", "--seed", "5"])
            try #require(made.status == 0, "stderr: \(made.standardError)")

            let sound = try await runChorus(["log", "verify", "--data", original, "--json"])
            #expect(sound.status == 0, "stdout: \(sound.standardOutput) stderr: \(sound.standardError)")
            let report = try lastJSONLine(sound.standardOutput)
            #expect(report["sound"] as? Bool == true)
            #expect(report["events"] as? Int ?? 0 >= 2000)
            #expect(report["stateEntries"] as? Int ?? 0 > 0)

            // One byte of one event's payload, in a copy of the log's data file. (Only the log is copied: the read
            // models' file is a sparse one of gigabytes.)
            let flipped = root + "/flipped"
            try FileManager.default.createDirectory(atPath: flipped, withIntermediateDirectories: false)
            try FileManager.default.copyItem(atPath: original + "/log", toPath: flipped + "/log")
            try FileManager.default.copyItem(atPath: original + "/keys", toPath: flipped + "/keys")
            let target = LogPosition(1_200)
            let payload = try readEvent(at: target, in: original).payload
            try #require(payload.count >= 8)
            var file = try Array(Data(contentsOf: URL(fileURLWithPath: flipped + "/log/data.mdb")))
            // Every copy in the file: pages a later commit copied keep a stale one until reused, and which copy is live
            // depends on how the appends fell into commits.
            let offsets = offsets(of: payload, in: file)
            try #require(!offsets.isEmpty)
            for offset in offsets { file[offset + payload.count / 2] ^= 0x20 }
            try Data(file).write(to: URL(fileURLWithPath: flipped + "/log/data.mdb"))
            let corrupt = try await runChorus(["log", "verify", "--data", flipped, "--json"])
            #expect(corrupt.status == 1)
            let found = try lastJSONLine(corrupt.standardOutput)
            #expect(found["sound"] as? Bool == false)
            #expect(found["position"] as? Int == 1_200, "\(found)")
            let text = try await runChorus(["log", "verify", "--data", flipped])
            #expect(text.status == 1)
            #expect(text.standardOutput.contains("position 1200"), "\(text.standardOutput)")
            // A replay prints every event before the damaged one, in order, and then fails saying why.
            let replay = try await runChorus(["replay", "--data", flipped, "--json"])
            #expect(replay.status == 1)
            let printed = try replay.standardOutput.split(separator: "\n").map {
                try lastJSONLine(String($0))["position"] as? Int ?? 0
            }
            #expect(printed == Array(1..<1_200))
            #expect(replay.standardError.contains("1200"), "\(replay.standardError)")

            // A follow that no event made, written into the decision state of another copy.
            let lying = root + "/lying"
            try FileManager.default.createDirectory(atPath: lying, withIntermediateDirectories: false)
            try FileManager.default.copyItem(atPath: original + "/log", toPath: lying + "/log")
            try FileManager.default.copyItem(atPath: original + "/keys", toPath: lying + "/keys")
            let log = try DataDirectory(lying).openLog()
            try await log.withWriter {
                try await log.append(.durable, eventCount: 0) { batch in
                    try batch.state.put([0x08], for: Array("nobody\u{0}no one".utf8), in: StateTable("follows"))
                }
            }
            log.close()
            let mismatch = try await runChorus(["log", "verify", "--data", lying])
            #expect(mismatch.status == 1)
            #expect(mismatch.standardOutput.contains("decision state table follows"), "\(mismatch.standardOutput)")
            #expect(mismatch.standardOutput.contains("nobody / no one"))
        }
    }

    @Test("a directory without a log is refused with a clear message")
    func noLog() async throws {
        try await withTemporaryDirectory { root in
            let run = try await runChorus(["log", "verify", "--data", root + "/none"])
            #expect(run.status == 1)
            #expect(run.standardError.contains("no event log in \(root)/none/log"))
        }
    }
}

/// The last line of `output`, a JSON object.
func lastJSONLine(_ output: String) throws -> [String: Any] {
    let line = try #require(output.split(separator: "\n").last, "no output")
    return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not JSON: \(line)")
}

/// The event at `position` of the log in the data directory `root`.
func readEvent(at position: LogPosition, in root: String) throws -> RecordedEvent {
    let log = try DataDirectory(root).openLog(readOnly: true)
    defer { log.close() }
    return try #require(try log.read(from: position, limit: 1).first)
}

/// Where `needle` starts in `haystack`, each place (a debug build's generic `ranges(of:)` takes most of a minute on a
/// 2 MB file).
func offsets(of needle: [UInt8], in haystack: [UInt8]) -> [Int] {
    guard !needle.isEmpty, needle.count <= haystack.count else { return [] }
    return haystack.withUnsafeBytes { hay in
        needle.withUnsafeBytes { needle in
            (0...(hay.count - needle.count)).filter {
                memcmp(hay.baseAddress! + $0, needle.baseAddress!, needle.count) == 0
            }
        }
    }
}
