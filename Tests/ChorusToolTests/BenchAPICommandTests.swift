import Foundation
import Testing

@Suite("chorus bench api")
struct BenchAPICommandTests {
    @Test(
        "drives the feed and its ceiling in alternating rounds, then posts, live delivery, a feed of four-image posts, a hashtag page and a feed through 100 muted words"
    )
    func jsonContract() async throws {
        let run = try await runChorus([
            "bench", "api", "--events", "1000", "--users", "4", "--seconds", "2", "--rounds", "2", "--connections", "4",
            "--messages", "5", "--json",
        ])
        #expect(run.status == 0, "stderr: \(run.standardError)")
        #expect(run.standardError.contains("round 1: feed"), "stderr: \(run.standardError)")
        #expect(run.standardError.contains("round 2: feed"), "stderr: \(run.standardError)")
        #expect(run.standardError.contains("round 1: hashtag page"), "stderr: \(run.standardError)")
        let figures = try run.benchFigures(suite: "api")
        func figure(_ name: String) -> Double { figures[name] ?? 0 }
        for name in [
            "feed_following_rps", "health_rps", "post_create_rps", "live_delivery_p99_ms", "feed_four_images_rps",
            "feed_four_images_to_ceiling_ratio", "hashtag_page_to_ceiling_ratio", "feed_muted_words_to_ceiling_ratio",
        ] {
            #expect(figure(name) > 0, "figure \(name): \(figures)")
        }
        #expect(figure("feed_following_non_2xx") == 0 && figure("feed_four_images_non_2xx") == 0)
        #expect(figure("hashtag_page_non_2xx") == 0 && figure("feed_muted_words_non_2xx") == 0)
        // The ratio is the two rates over all the rounds.
        let ratio = figure("feed_following_rps") / figure("health_rps")
        #expect(abs(figure("feed_to_ceiling_ratio") - ratio) < 0.01, "\(figures)")
    }

    @Test("with --push the server pushes to a local APNs, each signed-in user's phone registered: every message too")
    func pushOn() async throws {
        let run = try await runChorus([
            "bench", "api", "--events", "1000", "--users", "4", "--seconds", "1", "--rounds", "1", "--connections", "4",
            "--messages", "5", "--push", "--json",
        ])
        #expect(run.status == 0, "stderr: \(run.standardError)")
        #expect(run.standardError.contains("registering a phone for each of the 4 signed-in users"))
        let figures = try run.benchFigures(suite: "api")
        #expect((figures["feed_to_ceiling_ratio"] ?? 0) > 0, "\(figures)")
        #expect((figures["pushes_arrived"] ?? 0) >= 5, "the five messages' pushes: \(figures)")
    }

    @Test("more rounds than seconds are refused with a clear message")
    func tooManyRounds() async throws {
        let run = try await runChorus(["bench", "api", "--seconds", "2", "--rounds", "3"])
        #expect(run.status != 0)
        #expect(run.standardError.contains("--rounds must be from 1 to --seconds"))
    }
}
