import Foundation

/// Durations measured one by one, in milliseconds.
struct Latencies {
    private var milliseconds: [Double] = []

    var count: Int { milliseconds.count }

    mutating func add(_ duration: Duration) { milliseconds.append(duration.seconds * 1000) }

    func percentile(_ p: Double) -> Double {
        let sorted = milliseconds.sorted()
        guard !sorted.isEmpty else { return .nan }
        return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
    }
}
