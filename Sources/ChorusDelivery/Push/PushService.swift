import AsyncHTTPClient
import ChorusBackend
import ChorusCluster
import ChorusDomain
import ChorusLog
import ChorusProjections
import Logging
import ServiceLifecycle

/// The durable outbox of pushes, `pushes/` in the data directory: one queue per device, in log order. Items hold
/// device tokens, names and message texts in plain; a deleted account's are forgotten within the erasure delay.
package typealias PushOutbox = DeliveryOutbox<Push>

/// Sends pushes to phones: follows the log into the push outbox once the read models have applied each event
/// (``PushEvents`` decides what), and delivers each device's pushes in log order through APNs or FCM, many devices at
/// once over one HTTP/2 connection, recording each batch's outcomes in one durable write.
///
/// A refused token forgets its device (`DeviceForgotten`, reason `refused`) and drops its queue; a failure is tried
/// again with backoff, honouring `Retry-After`, until the push expires; a push to a device forgotten meanwhile, or
/// expired before it could go, is not sent.
package struct PushService: Service {
    let backend: ChorusBackend
    let outbox: PushOutbox
    let events: PushEvents
    let configuration: PushConfiguration
    /// Whether this node sends now (in a cluster, one node does).
    package let turn: PushSendingTurn
    let logger: Logger

    package init(
        backend: ChorusBackend, outbox: PushOutbox, events: PushEvents, configuration: PushConfiguration,
        logger: Logger
    ) {
        (self.backend, self.outbox, self.events) = (backend, outbox, events)
        (self.configuration, self.logger) = (configuration, logger)
        turn = PushSendingTurn(lease: backend.cluster.map { ClusterPushLease(database: $0) }, logger: logger)
    }

    package func run() async throws {
        let client = try PushHTTPClient.make(trustingAlso: configuration.caFile)
        do {
            let senders = try await PushSenders(configuration: configuration, client: client)
            await cancelWhenGracefulShutdown {
                await withTaskGroup(of: Void.self) { group in
                    group.addTask {
                        await outbox.follow(backend, logger: logger, what: "pushes") { event, view in
                            try events.pushes(of: event, in: view).filter { senders.sends($0.platform) }
                        }
                    }
                    group.addTask { await deliver(with: senders) }
                }
            }
            await turn.release()
        } catch {
            try await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }

    /// Sends what is due, a batch at a time: the first push of each device, up to ``PushConfiguration/concurrency``.
    private func deliver(with senders: PushSenders) async {
        while !Task.isCancelled {
            do {
                guard await turn.maySend(outbox) else {
                    try await Task.sleep(for: .milliseconds(100))
                    continue
                }
                let now = Self.now()
                let due = try outbox.due(at: now, limit: configuration.concurrency)
                if due.isEmpty {
                    let next = try outbox.earliestAttempt().map { max(0, $0 - now) } ?? 10
                    try await Task.sleep(for: .milliseconds(min(next, 10)))
                    continue
                }
                try await send(due, with: senders)
            } catch is CancellationError {
                return
            } catch {
                logger.error("pushes: delivery failed; trying again", metadata: ["error": "\(error)"])
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }

    private func send(_ due: [(key: [UInt8], pending: PushOutbox.Pending)], with senders: PushSenders) async throws {
        // Only to a device that still has the token: not one forgotten, or registered again by someone else, since.
        let registered = try backend.readModels.snapshot { view in
            try due.map {
                try view.device($0.pending.item.device, of: $0.pending.item.user)?.token == $0.pending.item.token
            }
        }.answer
        let started = Self.now()
        let answers = await withTaskGroup(of: (Int, PushOutcome).self) { group in
            for (index, entry) in due.enumerated() where registered[index] && entry.pending.item.expiresAt > started {
                group.addTask { (index, await senders.send(entry.pending.item)) }
            }
            var answers: [Int: PushOutcome] = [:]
            for await (index, outcome) in group { answers[index] = outcome }
            return answers
        }
        let now = Self.now()
        var settled: [(key: [UInt8], pending: PushOutbox.Pending, outcome: PushOutbox.Outcome)] = []
        var refused: [Push] = []
        var counted: [PushTally: Int] = [:]
        for (index, entry) in due.enumerated() {
            let push = entry.pending.item
            let outcome: PushOutbox.Outcome
            if !registered[index] {
                outcome = .queueRemoved(error: "the device was forgotten", refused: false)
            } else if let answer = answers[index] {
                outcome = settlement(of: answer, for: entry.pending, at: now)
                if case .forgetDevice = answer { refused.append(push) }
                counted[PushTally(provider: push.platform.rawValue, result: Self.result(of: outcome)), default: 0] += 1
            } else {
                outcome = .abandoned(error: "\(Self.describe(push)): expired before it could be sent")
            }
            settled.append((entry.key, entry.pending, outcome))
        }
        try outbox.settle(settled, at: now)
        for (tally, count) in counted {
            backend.metrics.recordPushes(provider: tally.provider, result: tally.result, count: count)
        }
        await turn.settled(
            settled.compactMap {
                if case .retry = $0.outcome { return nil }
                return $0.key
            })
        for push in refused {
            do {
                _ = try await backend.execute(
                    .forgetRefusedDevice(user: push.user, device: push.device), idempotencyKey: nil)
            } catch {
                // Its next push is refused again, and forgets it then.
                logger.error(
                    "pushes: forgetting a device whose token was refused failed",
                    metadata: ["device": "\(push.device)", "error": "\(error)"])
            }
        }
    }

    private func settlement(of answer: PushOutcome, for pending: PushOutbox.Pending, at now: Int64)
        -> PushOutbox.Outcome
    {
        let push = pending.item
        switch answer {
        case .delivered:
            return .delivered
        case .forgetDevice(let reason):
            return .queueRemoved(error: "\(Self.describe(push)): the token was refused: \(reason)", refused: true)
        case .drop(let reason):
            return .abandoned(error: "\(Self.describe(push)): \(reason)")
        case .retry(let after, let reason):
            let error = "\(Self.describe(push)): \(reason)"
            guard
                let retryAt = configuration.retryTime(
                    afterAttempt: pending.attempts + 1, retryAfter: after, expiresAt: push.expiresAt, now: now)
            else { return .abandoned(error: error + "; given up, as the push expires before its next try") }
            return .retry(at: retryAt, error: error)
        case .renewCredentials:
            return .retry(
                at: now + WebhookConfiguration.milliseconds(configuration.retryDelay), error: "credentials refused")
        }
    }

    /// The `result` of `chorus_push_sent_total`.
    private static func result(of outcome: PushOutbox.Outcome) -> String {
        switch outcome {
        case .delivered: "delivered"
        case .retry: "retried"
        case .abandoned: "dropped"
        case .queueRemoved: "token_removed"
        }
    }

    private static func describe(_ push: Push) -> String {
        "\(push.platform.rawValue) push \(push.id) to device \(push.device)"
    }

    private static func now() -> Int64 { EventTime.now.millisecondsSince1970 }
}

/// A label pair of `chorus_push_sent_total`: a batch counts each once, not each push.
private struct PushTally: Hashable {
    let provider: String
    let result: String
}

/// The senders of the services configured.
struct PushSenders: Sendable {
    let apns: APNsSender?
    let fcm: FCMSender?

    init(configuration: PushConfiguration, client: HTTPClient) async throws {
        if let apns = configuration.apns {
            self.apns = try await APNsSender(configuration: apns, client: client)
        } else {
            apns = nil
        }
        if let fcm = configuration.fcm {
            self.fcm = try await FCMSender(configuration: fcm, client: client)
        } else {
            fcm = nil
        }
    }

    /// Whether pushes to `platform`'s devices go anywhere: those to a service not configured are not kept.
    func sends(_ platform: PushPlatform) -> Bool {
        switch platform {
        case .apns: apns != nil
        case .fcm: fcm != nil
        }
    }

    func send(_ push: Push) async -> PushOutcome {
        switch push.platform {
        case .apns: await apns?.send(push) ?? .drop(reason: "APNs is not configured")
        case .fcm: await fcm?.send(push) ?? .drop(reason: "FCM is not configured")
        }
    }
}
