/// The events of a log after a position, caught up and then live (``EventLog/subscribe(after:batchSize:)``).
public struct LogSubscription: AsyncSequence, Sendable {
    public typealias Element = RecordedEvent

    let log: any EventLog
    let after: LogPosition
    let batchSize: Int

    public func makeAsyncIterator() -> Iterator {
        Iterator(log: log, last: after, batchSize: batchSize)
    }

    public struct Iterator: AsyncIteratorProtocol {
        let log: any EventLog
        /// The last position handed out.
        var last: LogPosition
        let batchSize: Int
        var buffer: [RecordedEvent] = []
        var index = 0

        public mutating func next() async throws -> RecordedEvent? {
            while index == buffer.count {
                if Task.isCancelled { return nil }
                let batch = try log.read(from: last.next, limit: batchSize)
                if batch.isEmpty {
                    do {
                        _ = try await log.waitForHead(after: last)
                    } catch is CancellationError {
                        return nil
                    } catch let error as EventLogError where error.code == .closed {
                        return nil
                    }
                } else {
                    buffer = batch
                    index = 0
                }
            }
            defer { index += 1 }
            last = buffer[index].position
            return buffer[index]
        }
    }
}
