import Foundation
import Testing

@Suite("chorus bench console")
struct BenchConsoleCommandTests {
    @Test("times every console page on a demo log and what an open Overview costs, as one JSON object of figures")
    func jsonContract() async throws {
        let run = try await runChorus(["bench", "console", "--json", "--events", "3000", "--requests", "5"])
        #expect(run.status == 0, "stderr: \(run.standardError)")
        let figures = try run.benchFigures(suite: "console")
        let pages = [
            "overview", "log", "log_common_type", "log_rare_type", "log_user", "log_stream", "log_time_range",
            "event", "projections", "reports", "users_handle", "users_email", "users_list", "erasures", "deliveries",
        ]
        for page in pages {
            let p99 = try #require(figures["\(page)_p99_ms"], "missing figure \(page)_p99_ms")
            #expect(p99 > 0 && p99 >= (figures["\(page)_p50_ms"] ?? .infinity), "\(page)")
        }
        let worst = try #require(figures["worst_page_p99_ms"])
        #expect(worst == pages.compactMap { figures["\($0)_p99_ms"] }.max())
        #expect((figures["overview_core_percent"] ?? -1) >= 0)
    }
}
