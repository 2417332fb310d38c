import ChorusCluster
import ChorusLMDBLog
import ChorusLog
import CoreMetrics
import Foundation
import Prometheus
import Synchronization

/// What `/metrics` shows, in Prometheus's text format: requests and their latency per route, appends and commit batch
/// sizes, the read models' position and lag, and open live streams. Recorded through swift-metrics with a factory of
/// our own registry, so that two servers in one process (tests) keep apart.
package final class ChorusMetrics: Sendable {
    private let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory
    private let liveStreams = Atomic<Int>(0)
    private let requests = Atomic<Int>(0)
    /// The request count and time of the last ``requestsPerSecond`` reading, with the rate it gave.
    private let requestSample = Mutex<(at: ContinuousClock.Instant, count: Int, rate: Double)?>(nil)
    /// The request metrics of each route, method and status, made once: making them asks the registry, under its lock,
    /// for every request otherwise.
    private let pagesReused: CoreMetrics.Counter
    private let pagesRendered: CoreMetrics.Counter
    private let requestMetrics = Mutex<[RequestKey: (count: CoreMetrics.Counter, duration: CoreMetrics.Timer)]>([:])

    private struct RequestKey: Hashable {
        let route: String
        let method: String
        let status: Int
    }

    package init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .microseconds(250), .milliseconds(1), .milliseconds(2.5), .milliseconds(5), .milliseconds(10),
            .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .seconds(1), .seconds(5),
        ]
        factory.valueHistogramBuckets["chorus_log_commit_appends"] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 1024]
        self.factory = factory
        pagesReused = CoreMetrics.Counter(
            label: "chorus_pages_total", dimensions: [("result", "reused")], factory: factory)
        pagesRendered = CoreMetrics.Counter(
            label: "chorus_pages_total", dimensions: [("result", "rendered")], factory: factory)
    }

    /// One answered request; `route` is the route's pattern (`/v1/users/{id}`), never the raw path.
    package func recordRequest(route: String, method: String, status: Int, duration: Duration) {
        let key = RequestKey(route: route, method: method, status: status)
        let metrics = requestMetrics.withLock { known in
            if let metrics = known[key] { return metrics }
            let made = (
                count: CoreMetrics.Counter(
                    label: "chorus_http_requests_total",
                    dimensions: [("route", route), ("method", method), ("status", String(status))], factory: factory),
                duration: CoreMetrics.Timer(
                    label: "chorus_http_request_duration_seconds", dimensions: [("route", route), ("method", method)],
                    factory: factory)
            )
            known[key] = made
            return made
        }
        metrics.count.increment()
        metrics.duration.recordNanoseconds(duration.nanoseconds)
        requests.add(1, ordering: .relaxed)
    }

    /// Requests answered per second since the reading before, at least a second ago (the console's Overview reads it
    /// at each refresh); 0 at the first reading.
    package var requestsPerSecond: Double {
        let (now, count) = (ContinuousClock.now, requests.load(ordering: .relaxed))
        return requestSample.withLock { sample in
            guard let last = sample else {
                sample = (now, count, 0)
                return 0
            }
            let elapsed = now - last.at
            guard elapsed >= .seconds(1) else { return last.rate }
            let rate = Double(count - last.count) / elapsed.seconds
            sample = (now, count, rate)
            return rate
        }
    }

    /// Live streams open now.
    package var openLiveStreams: Int { liveStreams.load(ordering: .relaxed) }

    /// One group commit of the log.
    func recordCommit(_ report: CommitReport) {
        CoreMetrics.Counter(label: "chorus_log_commits_total", factory: factory).increment()
        CoreMetrics.Counter(label: "chorus_log_appended_events_total", factory: factory).increment(by: report.events)
        CoreMetrics.Recorder(label: "chorus_log_commit_appends", factory: factory).record(report.appends)
        CoreMetrics.Timer(label: "chorus_log_commit_duration_seconds", factory: factory)
            .recordNanoseconds(report.duration.nanoseconds)
    }

    /// One commit this node made to the cluster; a commit decided more than once lost turns to other nodes' commits.
    func recordClusterCommit(_ report: ClusterCommitReport) {
        CoreMetrics.Counter(label: "chorus_cluster_commits_total", factory: factory).increment()
        CoreMetrics.Counter(label: "chorus_cluster_repeated_decisions_total", factory: factory)
            .increment(by: report.attempts - 1)
        CoreMetrics.Timer(label: "chorus_cluster_commit_duration_seconds", factory: factory)
            .recordNanoseconds(report.duration.nanoseconds)
    }

    /// Pushes one provider (`apns`, `fcm`) answered, by what became of them: `delivered`, `retried`, `dropped`,
    /// `token_removed`.
    package func recordPushes(provider: String, result: String, count: Int = 1) {
        CoreMetrics.Counter(
            label: "chorus_push_sent_total", dimensions: [("provider", provider), ("result", result)], factory: factory
        ).increment(by: count)
    }

    /// A page of posts answered again as kept (`reused`) or read from the read models (`rendered`).
    package func recordPage(reused: Bool) {
        (reused ? pagesReused : pagesRendered).increment()
    }

    package func liveStreamOpened() { liveStreams.add(1, ordering: .relaxed) }
    package func liveStreamClosed() { liveStreams.subtract(1, ordering: .relaxed) }

    /// The text of `/metrics`, with the gauges read now.
    package func render(logHead: LogPosition, projectionPosition: LogPosition, eventsPerSecond: Double) -> [UInt8] {
        let gauge = { (label: String, value: Double) in
            CoreMetrics.Gauge(label: label, factory: self.factory).record(value)
        }
        gauge("chorus_log_head", Double(logHead.rawValue))
        gauge("chorus_projection_position", Double(projectionPosition.rawValue))
        gauge("chorus_projection_lag", Double(logHead.rawValue - min(logHead.rawValue, projectionPosition.rawValue)))
        gauge("chorus_projection_events_per_second", eventsPerSecond)
        gauge("chorus_live_streams", Double(liveStreams.load(ordering: .relaxed)))
        return registry.emitToBuffer()
    }
}

extension Duration {
    package var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    /// The duration in seconds, as a `Double`.
    package var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
