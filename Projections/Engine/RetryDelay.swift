/// Waits between attempts at something that failed: from 50 ms, doubling, to at most 5 s.
struct RetryDelay {
    private(set) var failures = 0

    mutating func next() -> Duration {
        defer { failures += 1 }
        return min(.milliseconds(50) * (1 << min(failures, 7)), .seconds(5))
    }
}
