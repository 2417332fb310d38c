import Foundation
import Testing

@Suite("chorus bench push")
struct BenchPushCommandTests {
    @Test("pushes through a server to its local APNs, beside the endpoint's ceiling, and ends with one JSON object")
    func jsonContract() async throws {
        let run = try await runChorus([
            "bench", "push", "--json", "--authors", "2", "--devices-per-author", "5", "--likers", "3", "--rounds", "1",
            "--rate", "50", "--seconds", "1", "--feed-readers", "1",
        ])
        #expect(run.status == 0, "stderr: \(run.standardError)")
        let figures = try run.benchFigures(suite: "push")
        for name in [
            "delivered_per_s", "endpoint_ceiling_per_s", "delivered_to_ceiling_ratio", "like_to_push_ms_p99",
            "likes_per_s_sent",
        ] {
            let value = try #require(figures[name], "missing figure \(name)")
            #expect(value > 0, "\(name) is \(value)")
        }
        let ratio = try #require(figures["delivered_to_ceiling_ratio"])
        let computed = try #require(figures["delivered_per_s"]) / (try #require(figures["endpoint_ceiling_per_s"]))
        #expect(abs(ratio - computed) / computed < 0.01)
    }

    @Test("more than 100 phones per author is refused with a clear message")
    func badSizes() async throws {
        let run = try await runChorus(["bench", "push", "--devices-per-author", "101"])
        #expect(run.status != 0)
        #expect(run.standardError.contains("--devices-per-author at most 100"))
    }
}
