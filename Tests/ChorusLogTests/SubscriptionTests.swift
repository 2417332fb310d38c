import ChorusLog
import ChorusTestSupport
import Synchronization
import Testing

@Suite("Subscriptions")
struct SubscriptionTests {
    @Test("a subscription catches up, goes live, and ends when the log closes")
    func catchUpThenLive() async throws {
        try await withTemporaryDirectory { directory in
            let log = try LMDBEventLog(directory: directory)
            try await log.withWriter {
                for index in 1...3 { _ = try await log.append(tick("s", "old \(index)")) }

                let received = Mutex<[String]>([])
                let subscriber = Task {
                    for try await event in log.subscribe(after: 1, batchSize: 2) {
                        received.withLock { $0.append(event.text) }
                    }
                }
                for index in 1...3 { _ = try await log.append(tick("s", "new \(index)")) }
                try await waitUntil { received.withLock { $0.count } == 5 }
                log.close()
                try await subscriber.value
                #expect(received.withLock { $0 } == ["old 2", "old 3", "new 1", "new 2", "new 3"])
            }
        }
    }

    @Test("cancelling a waiting subscriber ends its sequence")
    func cancellation() async throws {
        try await withTemporaryDirectory { directory in
            try await withLog(directory) { log in
                _ = try await log.append(tick("s"))
                let count = Mutex(0)
                let waiting = Task {
                    for try await _ in log.subscribe() { count.withLock { $0 += 1 } }
                }
                try await waitUntil { count.withLock { $0 } == 1 }
                waiting.cancel()
                try await waiting.value
                #expect(count.withLock { $0 } == 1)
            }
        }
    }
}

/// Polls `condition` until it holds; fails the test after `seconds`.
func waitUntil(seconds: Double = 10, _ condition: () throws -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while try !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("condition not met within \(seconds) s")
            return
        }
        try await Task.sleep(for: .milliseconds(5))
    }
}
