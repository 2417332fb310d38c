import ChorusBackend
import ChorusDelivery
import ChorusLog
import Hummingbird

/// Deliveries: the webhook and push outboxes, as `GET /v1/admin/webhooks` and `GET /v1/admin/push` show them, with the
/// items failing now and "Retry now", which makes them due at once instead of at their next attempt.
struct DeliveriesPage {
    struct Outbox {
        let name: String
        /// `webhooks` or `push`, as the form names it.
        let key: String
        let details: String
        let delivered: UInt64
        let pending: Int
        let failing: Int
        let abandoned: UInt64
        let removed: UInt64
        let lastError: String?
        let failures: [Failure]
        /// Mustache reads stored properties alone.
        let hasFailures: Bool
    }

    struct Failure {
        let queue: String
        let attempts: Int64
        let nextAttemptAt: String
        let lastError: String
    }

    /// Failing items an outbox shows at most.
    static let failuresShown = 20

    let outboxes: [Outbox]

    static let template = """
        {{<layout}}
        {{$content}}
        {{#page}}
        {{#outboxes}}
        <section aria-labelledby="{{key}}">
        <h2 id="{{key}}">{{name}}</h2>
        <p class="notice">{{details}}</p>
        <dl>
        <dt>Delivered</dt><dd>{{delivered}}</dd>
        <dt>Pending</dt><dd>{{pending}}</dd>
        <dt>Failing</dt><dd>{{failing}}</dd>
        <dt>Abandoned</dt><dd>{{abandoned}}</dd>
        <dt>Removed recipients</dt><dd>{{removed}}</dd>
        <dt>Last error</dt><dd>{{#lastError}}{{.}}{{/lastError}}{{^lastError}}none{{/lastError}}</dd>
        </dl>
        {{#hasFailures}}
        <table>
        <thead><tr><th scope="col">Recipient</th><th scope="col">Attempts</th><th scope="col">Next attempt</th>\
        <th scope="col">Last error</th></tr></thead>
        <tbody>
        {{#failures}}<tr><td>{{queue}}</td><td>{{attempts}}</td><td>{{nextAttemptAt}}</td><td>{{lastError}}</td></tr>\
        {{/failures}}
        </tbody>
        </table>
        {{/hasFailures}}
        <form method="post" action="/admin/deliveries/retry">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <input type="hidden" name="outbox" value="{{key}}">
        <button type="submit">Retry now</button>
        </form>
        </section>
        {{/outboxes}}
        {{^outboxes}}<p>Neither webhooks nor push are configured.</p>{{/outboxes}}
        {{/page}}
        {{/content}}
        {{/layout}}
        """
}

extension ConsoleRoutes {
    func addDeliveries(to console: RouterGroup<Context>) {
        page(console, "deliveries") { _, _ in
            ConsoleView(title: "Deliveries", template: "deliveries", page: DeliveriesPage(outboxes: try outboxes()))
        }
        action(console, "deliveries/retry") { _, _, form in
            let now = EventTime.now.millisecondsSince1970
            switch form["outbox"] {
            case "webhooks": _ = try deliveries.webhooks?.retryNow(at: now)
            case "push": _ = try deliveries.pushes?.retryNow(at: now)
            default: throw ConsoleRefusal(.badRequest, "outbox is webhooks or push")
            }
            return "/admin/deliveries"
        }
    }

    private func outboxes() throws -> [DeliveriesPage.Outbox] {
        var outboxes: [DeliveriesPage.Outbox] = []
        if let webhooks = deliveries.webhooks {
            outboxes.append(
                try Self.outbox(
                    webhooks, name: "Webhooks", key: "webhooks",
                    details: "Signed webhooks to this server's webhook URL, in log order per recipient."))
        }
        if let pushes = deliveries.pushes {
            let providers = [deliveries.push?.apns != nil ? "APNs" : nil, deliveries.push?.fcm != nil ? "FCM" : nil]
            let sending = deliveries.pushTurn?.isSending == true ? "this node sends" : "another node sends"
            outboxes.append(
                try Self.outbox(
                    pushes, name: "Push", key: "push",
                    details: "Through \(providers.compactMap { $0 }.joined(separator: " and ")); \(sending)."))
        }
        return outboxes
    }

    private static func outbox<Item>(_ outbox: DeliveryOutbox<Item>, name: String, key: String, details: String)
        throws -> DeliveriesPage.Outbox
    {
        let status = try outbox.status()
        let failures = try outbox.pending().filter { $0.attempts > 0 }.prefix(DeliveriesPage.failuresShown).map {
            DeliveriesPage.Failure(
                queue: $0.item.queue, attempts: $0.attempts,
                nextAttemptAt: EventTime(millisecondsSince1970: $0.nextAttemptAt).rfc3339,
                lastError: $0.lastError ?? "")
        }
        return DeliveriesPage.Outbox(
            name: name, key: key, details: details, delivered: status.delivered, pending: status.pending,
            failing: status.failing, abandoned: status.abandoned, removed: status.removed,
            lastError: status.lastError, failures: Array(failures), hasFailures: !failures.isEmpty)
    }
}
