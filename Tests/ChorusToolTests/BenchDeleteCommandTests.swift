import Foundation
import Testing

@Suite("chorus bench delete")
struct BenchDeleteCommandTests {
    @Test("measures posting and deleting a followed author's posts, and ends with one JSON object of its figures")
    func jsonContract() async throws {
        let run = try await runChorus([
            "bench", "delete", "--json", "--followers", "40", "--history", "4", "--rounds", "3",
        ])
        #expect(run.status == 0, "stderr: \(run.standardError)")
        let figures = try run.benchFigures(suite: "delete")
        #expect(figures["followers"] == 40)
        for name in ["post_fanout_ms_p50", "delete_new_post_ms_p50", "delete_old_post_ms_p50", "delete_to_post_ratio"] {
            let value = try #require(figures[name], "missing figure \(name)")
            #expect(value > 0, "\(name) is \(value)")
        }
        let ratio = try #require(figures["delete_to_post_ratio"])
        let computed = try #require(figures["delete_new_post_ms_p50"]) / (try #require(figures["post_fanout_ms_p50"]))
        #expect(abs(ratio - computed) / computed < 0.01)
    }

    @Test("a history shorter than the rounds is refused with a clear message")
    func badSizes() async throws {
        let run = try await runChorus(["bench", "delete", "--history", "2", "--rounds", "5"])
        #expect(run.status != 0)
        #expect(run.standardError.contains("--history at least --rounds"))
    }
}
