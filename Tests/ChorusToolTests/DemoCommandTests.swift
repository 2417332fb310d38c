import Foundation
import Testing

@Suite("chorus demo and chorus bench projections")
struct DemoCommandTests {
    @Test("demo fills an empty data directory and builds its read models; a second run is refused")
    func demo() throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("chorus-demo-test-\(UUID().uuidString.lowercased())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let run = try runChorus(["demo", "--data", directory, "--events", "600", "--seed", "3"])
        #expect(run.status == 0, "stderr: \(run.standardError)")
        #expect(run.standardOutput.contains("read models built through position"))
        // Progress of the build, after that of the writing.
        let building = try #require(run.standardError.range(of: "building the read models"))
        #expect(run.standardError[building.upperBound...].contains("events (100%)"))
        #expect(FileManager.default.fileExists(atPath: directory + "/log/data.mdb"))
        #expect(FileManager.default.fileExists(atPath: directory + "/projections/data.mdb"))

        let again = try runChorus(["demo", "--data", directory, "--events", "10"])
        #expect(again.status != 0)
        #expect(again.standardError.contains("empty data directory"))
    }

    @Test("bench projections prints one JSON object with every figure as its last line")
    func benchProjectionsContract() throws {
        let run = try runChorus(["bench", "projections", "--events", "300", "--json"])
        #expect(run.status == 0, "stderr: \(run.standardError)")
        let last = try #require(run.standardOutput.split(separator: "\n").last)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any])
        #expect(object["suite"] as? String == "projections")
        let figures = try #require(object["figures"] as? [String: Double])
        for name in ["events", "rebuild_events_per_s", "feed_entries_per_s", "peak_rss_mb", "rss_ratio_2x"] {
            #expect((figures[name] ?? 0) > 0, "figure \(name)")
        }
        #expect(figures["events"] ?? 0 >= 300)
    }
}
