import Testing

@testable import chorus

/// How the benchmarks read a server's `/metrics`: one metric's samples, summed over the labels asked for.
@Suite("chorus bench: metrics read from Prometheus's text")
struct MetricsTextTests {
    private static let text = """
        # TYPE chorus_http_requests_total counter
        chorus_http_requests_total{method="POST",route="/v1/rooms",status="429"} 3
        chorus_http_requests_total{method="POST",route="/v1/rooms",status="201"} 10
        chorus_http_requests_total{method="POST",route="/v1/reports",status="429"} 2
        chorus_http_requests_total_extra{status="429"} 100
        chorus_pages_total{result="reused"} 7
        chorus_pages_total{result="rendered"} 5
        chorus_cluster_commits_total 42
        """

    @Test("samples are summed over those with every label asked for, and no other metric's are")
    func sums() {
        #expect(MetricsText.sum(of: "chorus_http_requests_total", labeled: [#"status="429""#], in: Self.text) == 5)
        #expect(MetricsText.sum(of: "chorus_http_requests_total", in: Self.text) == 15)
        #expect(
            MetricsText.sum(
                of: "chorus_http_requests_total", labeled: [#"route="/v1/rooms""#, #"status="201""#], in: Self.text)
                == 10)
        #expect(MetricsText.sum(of: "chorus_pages_total", labeled: [#"result="reused""#], in: Self.text) == 7)
        #expect(MetricsText.sum(of: "chorus_cluster_commits_total", in: Self.text) == 42)
        #expect(MetricsText.sum(of: "chorus_cluster_repeated_decisions_total", in: Self.text) == 0, "not yet recorded")
    }
}
