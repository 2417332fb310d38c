import ChorusLMDBLog
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
                try await eventually("five delivered") { received.withLock { $0.count } == 5 }
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
                try await eventually("one delivered") { count.withLock { $0 } == 1 }
                waiting.cancel()
                try await waiting.value
                #expect(count.withLock { $0 } == 1)
            }
        }
    }
}
