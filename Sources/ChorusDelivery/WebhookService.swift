import AsyncHTTPClient
import ChorusBackend
import ChorusDomain
import ChorusLog
import ChorusProjections
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle

/// Where webhooks go, and how they are retried (`CHORUS_WEBHOOK_URL`, `CHORUS_WEBHOOK_SECRET`).
public struct WebhookConfiguration: Sendable {
    public var url: String
    public var signer: WebhookSigner
    /// The wait after the first failure; it doubles after each, up to ``maximumRetryDelay``.
    public var retryDelay: Duration = .seconds(1)
    public var maximumRetryDelay: Duration = .seconds(3600)
    /// A webhook still failing this long after its first attempt is given up on.
    public var retryWindow: Duration = .seconds(24 * 3600)
    /// An answer slower than this counts as a failure.
    public var timeout: Duration = .seconds(10)

    public init(url: String, signer: WebhookSigner) {
        self.url = url
        self.signer = signer
    }

    /// When attempt number `attempts` (1 for the first) failed at `now`: when to try again, nil once the window is
    /// over.
    func retryTime(afterAttempt attempts: Int64, firstAttemptAt: Int64, now: Int64) -> Int64? {
        let window = Self.milliseconds(retryWindow)
        guard now - firstAttemptAt < window else { return nil }
        let base = Self.milliseconds(retryDelay)
        let delay = min(Self.milliseconds(maximumRetryDelay), base << min(attempts - 1, 40))
        return now + delay
    }

    static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }
}

/// Sends the outbox's webhooks: follows the log into the outbox once the read models have applied each event, and
/// delivers each recipient's webhooks in order, one at a time, retrying with exponential backoff across restarts.
package struct WebhookService: Service {
    let backend: ChorusBackend
    let outbox: WebhookOutbox
    let content: any WebhookContent
    let configuration: WebhookConfiguration
    let logger: Logger

    package init(
        backend: ChorusBackend, outbox: WebhookOutbox, content: any WebhookContent, configuration: WebhookConfiguration,
        logger: Logger
    ) {
        (self.backend, self.outbox, self.content) = (backend, outbox, content)
        (self.configuration, self.logger) = (configuration, logger)
    }

    package func run() async throws {
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    await outbox.follow(backend, logger: logger, what: "webhooks") { event, view in
                        try content.webhooks(of: event, in: view)
                    }
                }
                group.addTask { await deliver(with: client) }
            }
        }
        try await client.shutdown()
    }

    /// Sends what is due, recipients side by side, each recipient's webhooks one after the other.
    private func deliver(with client: HTTPClient) async {
        while !Task.isCancelled {
            do {
                let now = Self.now()
                let due = try outbox.due(at: now)
                if due.isEmpty {
                    let next = try outbox.earliestAttempt().map { max(0, $0 - now) } ?? 100
                    try await Task.sleep(for: .milliseconds(min(next, 100)))
                    continue
                }
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for (index, entry) in due.enumerated() {
                        // At most 16 at once.
                        if index >= 16 { try await group.next() }
                        group.addTask { try await send(entry.key, entry.pending, with: client) }
                    }
                    try await group.waitForAll()
                }
            } catch is CancellationError {
                return
            } catch {
                logger.error("webhooks: delivery failed; trying again", metadata: ["error": "\(error)"])
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }

    private func send(_ key: [UInt8], _ pending: WebhookOutbox.Pending, with client: HTTPClient) async throws {
        let webhook = pending.item
        let timestamp = Self.now() / 1000
        var request = HTTPClientRequest(url: configuration.url)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/json")
        request.headers.add(name: "webhook-id", value: webhook.id)
        request.headers.add(name: "webhook-timestamp", value: String(timestamp))
        request.headers.add(
            name: "webhook-signature",
            value: configuration.signer.signature(id: webhook.id, timestamp: timestamp, body: webhook.body))
        request.body = .bytes(ByteBuffer(bytes: webhook.body))
        let failure: String
        do {
            let response = try await client.execute(
                request, timeout: .milliseconds(WebhookConfiguration.milliseconds(configuration.timeout)))
            _ = try? await response.body.collect(upTo: 64 * 1024)
            if (200..<300).contains(response.status.code) {
                try outbox.delivered(key, pending)
                return
            }
            failure = "\(webhook.type) \(webhook.id): the receiver answered \(response.status.code)"
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            failure = "\(webhook.type) \(webhook.id): \(error)"
        }
        let now = Self.now()
        let retryAt = configuration.retryTime(
            afterAttempt: pending.attempts + 1,
            firstAttemptAt: pending.firstAttemptAt == 0 ? now : pending.firstAttemptAt,
            now: now)
        if retryAt == nil {
            logger.error("webhooks: given up after the retry window", metadata: ["webhook": "\(webhook.id)"])
        }
        try outbox.failed(key, pending, error: failure, at: now, retryAt: retryAt)
    }

    private static func now() -> Int64 { EventTime.now.millisecondsSince1970 }
}
