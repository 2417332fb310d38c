import Foundation
import Testing

@Suite("chorus bench day")
struct BenchDayCommandTests {
    @Test("drives posts, feed reads, likes, follows and live streams at rising rates on a zipf graph, and reports them")
    func jsonContract() async throws {
        let run = try await runChorus([
            "bench", "day", "--events", "4000", "--users", "60", "--streams", "10", "--readers", "1", "--minutes",
            "0.2", "--post-rates", "20,40", "--fan-out-limit", "50", "--json",
        ])
        #expect(run.status == 0, "stderr: \(run.standardError)")
        #expect(run.standardOutput.contains("posts/s asked"), "a line per post rate")
        let figures = try run.benchFigures(suite: "day")
        func figure(_ name: String) -> Double { figures[name] ?? 0 }
        #expect(figure("authors") == 60)
        #expect(figure("top_followers") >= 375, "a zipf graph of 500 users")
        #expect(
            figure("feed_entries_per_post") < figure("followers_per_post"),
            "the most followed authors' posts are held back: \(figures)")
        for name in [
            "posts_per_s", "feed_reads_per_s", "feed_read_p99_ms", "social_writes_per_s", "post_to_feed_p99_ms",
            "held_back_post_to_feed_p99_ms", "probe_posts", "live_events_per_s",
        ] {
            #expect(figure(name) > 0, "figure \(name): \(figures)")
        }
        #expect(figure("probe_posts_lost") == 0)
        // Users' writes are limited as in production, and a day's traffic meets no limit.
        #expect(figures["rate_limited_answers"] == 0, "\(figures)")
        let reused = try #require(figures["feed_pages_reused_share"])
        #expect((0...1).contains(reused))
    }

    @Test("post rates that do not rise are refused with a clear message")
    func badRates() async throws {
        let run = try await runChorus(["bench", "day", "--post-rates", "200,100"])
        #expect(run.status != 0)
        #expect(run.standardError.contains("--post-rates must rise"))
    }
}
