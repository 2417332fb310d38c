import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import PostgresNIO

/// One connection to the cluster's PostgreSQL, driven with event-loop futures and waited for on the caller's thread:
/// for code that must answer synchronously (the data keys, asked for in the middle of a decision or a projection
/// batch). It never needs Swift concurrency's shared threads, which such callers may be occupying, every one of them:
/// a task started there to reach PostgreSQL would wait for a thread that is itself waiting for that task.
final class BlockingConnection: @unchecked Sendable {
    private let eventLoop: any EventLoop
    private let configuration: PostgresConnection.Configuration
    private let logger: Logger
    /// How long one connection attempt or one statement may take before it fails.
    private let timeout: TimeAmount = .seconds(10)
    private let lock = NSLock()
    /// Guarded by `lock`: the open connection, if any. One statement at a time goes through it.
    private var connection: PostgresConnection?

    init(eventLoop: any EventLoop, configuration: PostgresConnection.Configuration, logger: Logger) {
        self.eventLoop = eventLoop
        self.configuration = configuration
        self.logger = logger
    }

    /// Runs `query` and returns its rows; connects first if need be. A failed statement drops the connection, so the
    /// next one starts on a fresh one.
    func query(_ query: PostgresQuery) throws -> [PostgresRow] {
        try lock.withLock {
            let connection: PostgresConnection
            if let open = self.connection, !open.isClosed {
                connection = open
            } else {
                connection = try waitBounded(
                    PostgresConnection.connect(on: eventLoop, configuration: configuration, id: 0, logger: logger),
                    "connecting")
                self.connection = connection
            }
            do {
                return try waitBounded(connection.query(query, logger: logger), "answering").rows
            } catch {
                self.connection = nil
                Self.release(connection)
                throw ClusterError("the cluster's database failed a key lookup (\(ClusterError.summary(error)))")
            }
        }
    }

    func close() {
        lock.withLock {
            if let connection { Self.release(connection) }
            connection = nil
        }
    }

    /// Closes `connection`, holding it until it is closed: PostgresNIO requires a connection be closed before it is
    /// deinitialised (and traps otherwise in debug builds).
    private static func release(_ connection: PostgresConnection) {
        connection.close().whenComplete { _ in withExtendedLifetime(connection) {} }
    }

    /// Waits for `future` on this thread, at most `timeout`. With a semaphore, not `EventLoopFuture.wait()`, which
    /// refuses every event-loop thread: the HTTP server decides commands on its own loops, and a key looked up there
    /// (once per user a node has not seen before; the local key store keeps it) holds that loop for one round trip.
    private func waitBounded<T: Sendable>(_ future: EventLoopFuture<T>, _ what: String) throws -> T {
        let done = DispatchSemaphore(value: 0)
        let outcome = NIOLockedValueBox<Result<T, any Error>?>(nil)
        future.whenComplete { result in
            outcome.withLockedValue { $0 = result }
            done.signal()
        }
        guard done.wait(timeout: .now() + .nanoseconds(Int(timeout.nanoseconds))) == .success,
            let result = outcome.withLockedValue({ $0 })
        else {
            throw ClusterError(
                "PostgreSQL did not finish \(what) within \(timeout.nanoseconds / 1_000_000_000) s")
        }
        return try result.get()
    }
}
