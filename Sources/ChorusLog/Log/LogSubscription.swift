extension EventLog {
    /// Returns the head once it is past `position`; throws `CancellationError`, or ``EventLogError/Code/closed``.
    public func waitForHead(after position: LogPosition) async throws -> LogPosition {
        try await notifier.waitForHead(after: position)
    }

    /// Every event after `position`, in order: first those already in the log, then each new one as it commits.
    /// Nothing is missed and nothing repeats at the seam, because it always reads from the log itself.
    /// The sequence ends when the task is cancelled or the log closes. A read-only log, whose writer is another
    /// process, is polled every 50 ms.
    public func subscribe(after position: LogPosition = .start, batchSize: Int = 512) -> LogSubscription {
        LogSubscription(log: self, after: position, batchSize: batchSize)
    }
}

/// See ``EventLog/subscribe(after:batchSize:)``.
public struct LogSubscription: AsyncSequence, Sendable {
    public typealias Element = RecordedEvent

    let log: EventLog
    let after: LogPosition
    let batchSize: Int

    public func makeAsyncIterator() -> Iterator {
        Iterator(log: log, last: after, batchSize: batchSize)
    }

    public struct Iterator: AsyncIteratorProtocol {
        let log: EventLog
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
                        if log.isReadOnly {
                            try await Task.sleep(for: .milliseconds(50))
                        } else {
                            _ = try await log.notifier.waitForHead(after: last)
                        }
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
