import ChorusBackend
import ChorusDelivery
import Foundation
import Logging

/// What the admin routes show of the outboxes: nil for those not configured.
struct Deliveries {
    var webhooks: WebhookOutbox?
    var pushes: PushOutbox?
    var push: PushConfiguration?
    /// Whether this node sends pushes now.
    var pushTurn: PushSendingTurn?
}

/// The outbox and its sender, when webhooks are configured (never for a read-only server, which appends nothing).
struct Webhooks {
    let outbox: WebhookOutbox
    let service: WebhookService

    init?(backend: ChorusBackend, configuration: ServerConfiguration, logger: Logger) throws {
        guard let webhooks = configuration.webhooks, !configuration.readOnly else { return nil }
        outbox = try WebhookOutbox(directory: backend.data.webhooks, startingAt: backend.log.head)
        service = WebhookService(
            backend: backend, outbox: outbox,
            content: WebhookEvents(
                renderer: ObjectRenderer(publicBaseURL: configuration.baseURL, mediaStore: backend.media),
                tokens: backend.tokens,
                keys: backend.keys),
            configuration: webhooks, logger: logger)
    }

    /// The outbox an earlier run with webhooks configured left behind, when this one has none: nothing is sent from it
    /// (until webhooks are configured again), but an erasure still takes a deleted account's webhooks out of it.
    static func dormantOutbox(backend: ChorusBackend, configuration: ServerConfiguration) throws -> WebhookOutbox? {
        guard configuration.webhooks == nil, !configuration.readOnly,
            FileManager.default.fileExists(atPath: backend.data.webhooks)
        else { return nil }
        return try WebhookOutbox(directory: backend.data.webhooks, startingAt: backend.log.head, following: false)
    }
}

/// The push outbox and its sender, when APNs or FCM is configured (never for a read-only server).
struct Pushes {
    let outbox: PushOutbox
    let service: PushService

    init?(backend: ChorusBackend, configuration: ServerConfiguration, logger: Logger) throws {
        guard let push = configuration.push, !configuration.readOnly else { return nil }
        outbox = try PushOutbox(directory: backend.data.pushes, startingAt: backend.log.head)
        service = PushService(
            backend: backend, outbox: outbox, events: PushEvents(keys: backend.keys), configuration: push,
            logger: logger)
    }

    /// The outbox an earlier run with push configured left behind, when this one has none: nothing is sent from it,
    /// but an erasure still takes a deleted account's pushes (and their device tokens) out of it.
    static func dormantOutbox(backend: ChorusBackend, configuration: ServerConfiguration) throws -> PushOutbox? {
        guard configuration.push == nil, !configuration.readOnly,
            FileManager.default.fileExists(atPath: backend.data.pushes)
        else { return nil }
        return try PushOutbox(directory: backend.data.pushes, startingAt: backend.log.head, following: false)
    }
}
