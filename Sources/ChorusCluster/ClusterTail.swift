import Logging
import NIOCore
import NIOPosix
import PostgresNIO

/// Tails the cluster's log into this node's replica: catches up whenever PostgreSQL announces a commit (LISTEN on
/// `chorus_log`, whose payload is the commit's number), and every quarter second besides, in case an announcement was
/// missed; after every reconnect it catches up from the replica's own last commit, so nothing between is lost.
final class ClusterTail: Sendable {
    /// How often the tail looks for commits it was not told of.
    static let pollInterval: Duration = .milliseconds(250)

    private let replicator: Replicator
    private let database: ClusterDatabase
    private let logger: Logger
    private let announced: AsyncStream<Void>.Continuation
    private let announcements: AsyncStream<Void>

    init(replicator: Replicator, database: ClusterDatabase, logger: Logger) {
        self.replicator = replicator
        self.database = database
        self.logger = logger
        (announcements, announced) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// Until the task is cancelled.
    func run() async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.listen() }
            group.addTask { await self.poll() }
            group.addTask {
                for await _ in self.announcements { await self.catchUp() }
            }
            await withTaskCancellationHandler {
                await group.waitForAll()
            } onCancel: {
                self.announced.finish()
            }
        }
    }

    private func poll() async {
        while !Task.isCancelled {
            announced.yield()
            try? await Task.sleep(for: Self.pollInterval)
        }
    }

    private func catchUp() async {
        do {
            try await replicator.catchUp()
        } catch {
            logger.warning(
                "the replica could not catch up with the cluster; trying again",
                metadata: ["error": "\(ClusterError.summary(error))"])
        }
    }

    /// Holds a connection that listens for commits, reconnecting after a second whenever it breaks.
    private func listen() async {
        var failures = 0
        while !Task.isCancelled {
            var listening = false
            do {
                let connection = try await PostgresConnection.connect(
                    on: MultiThreadedEventLoopGroup.singleton.any(),
                    configuration: database.address.connectionConfiguration(),
                    id: 0, logger: logger
                ).get()
                if failures > 0 { logger.notice("listening to the cluster again") }
                failures = 0
                listening = true
                database.connectionRestored()
                // Whatever committed while no one listened.
                announced.yield()
                try await withTaskCancellationHandler {
                    try await connection.listen(on: "chorus_log") { notifications in
                        for try await notification in notifications {
                            if let commit = UInt64(notification.payload) { replicator.heard(of: commit) }
                            announced.yield()
                        }
                    }
                } onCancel: {
                    connection.close().whenComplete { _ in }
                }
                try? await connection.close().get()
            } catch {
                // What the other connections had in flight when this one broke may never be answered.
                if listening, !Task.isCancelled { database.connectionLost(ClusterError.summary(error)) }
                if failures == 0 {
                    logger.warning(
                        "lost the cluster's announcements; polling until they are back",
                        metadata: ["error": "\(ClusterError.summary(error))"])
                }
                failures += 1
            }
            // At once after a connection broke (it may have been only this one), then once a second.
            try? await Task.sleep(for: failures > 1 ? .seconds(1) : .milliseconds(100))
        }
    }
}
