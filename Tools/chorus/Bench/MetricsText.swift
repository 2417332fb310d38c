/// Samples read out of Prometheus's text format, as a server's `/metrics` answers it, for the benchmarks' reports.
enum MetricsText {
    /// The sum of the samples of the metric `name` whose labels include each of `labels` (as written, such as
    /// `status="429"`): every sample of it when none are given. 0 before the metric was first recorded.
    static func sum(of name: String, labeled labels: [String] = [], in text: String) -> Double {
        var total = 0.0
        for line in text.split(separator: "\n") where line.hasPrefix(name + " ") || line.hasPrefix(name + "{") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
                continue
            }
            let series = line[..<space]
            if labels.allSatisfy({ series.contains($0) }) { total += value }
        }
        return total
    }
}
