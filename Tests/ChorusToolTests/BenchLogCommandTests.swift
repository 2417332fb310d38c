import Foundation
import Testing

@Suite("chorus bench log")
struct BenchLogCommandTests {
    @Test("prints a table, then with --json one JSON object with every figure as its last line")
    func jsonContract() async throws {
        let run = try await runChorus([
            "bench", "log", "--json", "--commits", "40", "--writers", "8", "--concurrent-events", "400",
            "--bulk-events", "2000",
        ])
        #expect(run.status == 0, "stderr: \(run.standardError)")
        let figures = try run.benchFigures(suite: "log")
        for name in [
            "raw_lmdb_commits_per_s", "append_1_writer_per_s", "ratio_1_writer_to_raw", "append_64_writers_per_s",
            "speedup_64_to_1", "bulk_import_per_s", "scan_decode_per_s",
        ] {
            let value = try #require(figures[name], "missing figure \(name)")
            #expect(value > 0, "\(name) is \(value)")
        }
        let ratio = try #require(figures["ratio_1_writer_to_raw"])
        let computed =
            try #require(figures["append_1_writer_per_s"]) / (try #require(figures["raw_lmdb_commits_per_s"]))
        #expect(abs(ratio - computed) / computed < 0.01, "the ratio is the quotient of the two figures beside it")
        #expect(run.standardOutput.contains("ratio_1_writer_to_raw"), "the table names each figure")
    }

    @Test("bad sizes exit non-zero with a clear message")
    func badSizes() async throws {
        let run = try await runChorus(["bench", "log", "--writers", "0"])
        #expect(run.status != 0)
        #expect(run.standardError.contains("sizes must be positive"))
    }
}
