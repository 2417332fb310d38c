import Foundation
import Testing

@Suite("chorus demo and chorus bench projections")
struct DemoCommandTests {
    @Test("demo fills an empty data directory and builds its read models; a second run is refused")
    func demo() async throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("chorus-demo-test-\(UUID().uuidString.lowercased())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let run = try await runChorus(["demo", "--data", directory, "--events", "600", "--seed", "3"])
        #expect(run.status == 0, "stderr: \(run.standardError)")
        #expect(run.standardOutput.contains("read models built through position"))
        // Progress of the build, after that of the writing.
        let building = try #require(run.standardError.range(of: "building the read models"))
        #expect(run.standardError[building.upperBound...].contains("events (100%)"))
        #expect(FileManager.default.fileExists(atPath: directory + "/log/data.mdb"))
        #expect(FileManager.default.fileExists(atPath: directory + "/projections/data.mdb"))

        // Photo posts of one to four generated pictures, most with alt texts, each picture stored by the pipeline.
        let created = try await runChorus(["replay", "--data", directory, "--type", "PostCreated", "--json"])
        let images = try created.standardOutput.split(separator: "\n").compactMap { line in
            (try lastJSONLine(String(line))["data"] as? [String: Any])?["media"] as? [[String: Any]]
        }
        #expect(images.contains { $0.count > 1 } && images.allSatisfy { $0.count <= 4 }, "\(images.map(\.count))")
        #expect(images.joined().contains { $0["alt"] is String } && images.joined().contains { $0["alt"] is NSNull })
        let stored = try FileManager.default.subpathsOfDirectory(atPath: directory + "/media")
        let shown = Set(images.joined().compactMap { $0["id"] as? String })
        #expect(shown.allSatisfy { id in stored.contains { $0.hasSuffix(id + ".info") } }, "every image is stored")

        // A private account, asked to be followed, and accepting.
        let edits = try await runChorus(["replay", "--data", directory, "--type", "ProfileEdited", "--json"])
        #expect(edits.standardOutput.contains("\"isPrivate\":true"))
        let follows = try await runChorus(["replay", "--data", directory, "--type", "Followed", "--json"])
        #expect(follows.standardOutput.contains(/"requestedAt":[0-9]/), "an accepted request")
        #expect(follows.standardOutput.contains("\"requestedAt\":null"), "a plain follow")

        // The demo ends with an account deletion, which verify accepts.
        let replay = try await runChorus(["replay", "--data", directory, "--type", "AccountDeleted", "--json"])
        #expect(replay.status == 0, "\(replay.standardError)")
        #expect(replay.standardOutput.split(separator: "\n").count == 1, "\(replay.standardOutput)")
        #expect(try await runChorus(["log", "verify", "--data", directory]).status == 0)

        // Deleting the demo's most followed accounts, on a copy: the original is left as it was.
        let erasure = try await runChorus(["bench", "erasure", "--data", directory, "--accounts", "2", "--json"])
        #expect(erasure.status == 0, "stderr: \(erasure.standardError)")
        let figures = try erasure.benchFigures(suite: "erasure")
        #expect(figures["accounts_deleted"] == 2)
        #expect(figures["events_per_deletion"] ?? 0 > 2, "more than the AccountDeleted and a session's end")
        for name in ["delete_command_ms_p50", "erasure_ms_p50", "rebuild_ms", "erasure_to_rebuild_ratio"] {
            #expect((figures[name] ?? 0) > 0, "figure \(name)")
        }
        let afterwards = try await runChorus(["replay", "--data", directory, "--type", "AccountDeleted", "--json"])
        #expect(afterwards.standardOutput == replay.standardOutput, "the benchmark deleted nothing in --data")

        let again = try await runChorus(["demo", "--data", directory, "--events", "10"])
        #expect(again.status != 0)
        #expect(again.standardError.contains("empty data directory"))
    }

    @Test("demo --graph zipf: the three most followed accounts are followed by most users")
    func zipfDemo() async throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("chorus-demo-test-\(UUID().uuidString.lowercased())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // One user per 8 events: 500 users.
        let run = try await runChorus(["demo", "--data", directory, "--events", "4000", "--graph", "zipf"])
        #expect(run.status == 0, "stderr: \(run.standardError)")
        let line = try #require(run.standardOutput.split(separator: "\n").first { $0.hasPrefix("most followed: ") })
        let counts = line.dropFirst("most followed: ".count).split(separator: ", ").compactMap {
            Int($0.split(separator: " ")[0])
        }
        #expect(counts.count == 3 && counts.allSatisfy { $0 >= 375 }, "\(line)")

        let wrong = try await runChorus(["demo", "--data", directory + "-other", "--graph", "uniform"])
        #expect(wrong.status != 0)
        #expect(wrong.standardError.contains("graph"), "\(wrong.standardError)")
    }

    @Test("bench projections prints one JSON object with every figure as its last line")
    func benchProjectionsContract() async throws {
        let run = try await runChorus(["bench", "projections", "--events", "300", "--json"])
        #expect(run.status == 0, "stderr: \(run.standardError)")
        let figures = try run.benchFigures(suite: "projections")
        for name in ["events", "rebuild_events_per_s", "feed_entries_per_s", "peak_rss_mb", "rss_ratio_2x"] {
            #expect((figures[name] ?? 0) > 0, "figure \(name)")
        }
        #expect(figures["events"] ?? 0 >= 300)
    }

    @Test("bench fanout measures both sides of the fan-out limit on a zipf log: held back is cheaper to write")
    func benchFanOut() async throws {
        let run = try await runChorus([
            "bench", "fanout", "--events", "4000", "--posts", "3", "--readers", "100", "--fan-out-limit", "50",
            "--prolific-posts", "1500", "--rounds", "1", "--json",
        ])
        #expect(run.status == 0, "stderr: \(run.standardError)")
        let figures = try run.benchFigures(suite: "fanout")
        #expect(figures["top_followers"] ?? 0 >= 375, "a zipf graph of 500 users")
        #expect(figures["merges_per_read"] ?? 0 >= 1, "the most followed accounts are merged")
        for name in [
            "write_us_per_feed_entry", "stall_ms_at_limit", "read_us_per_page_hybrid", "follow_ms_fanned_out",
            "follow_ms_hybrid", "unfollow_ms_fanned_out", "unfollow_ms_hybrid",
        ] {
            #expect((figures[name] ?? 0) > 0, "figure \(name)")
        }
        #expect(
            figures["write_ms_per_post_held_back"] ?? .infinity < figures["write_ms_per_post_fanned_out"] ?? 0,
            "\(figures)")
    }
}
