import ChorusBackend
import Foundation
import Hummingbird

/// The Overview: where the log and the read models stand, how busy the server is, and the backlogs, at a glance. It
/// asks for itself again every few seconds (a meta refresh: no script, and one bounded read per refresh).
struct OverviewPage {
    struct Outbox {
        let name: String
        let sending: String
        let delivered: UInt64
        let pending: Int
        let failing: Int
        let lastError: String
    }

    /// How often an open Overview asks for itself again.
    static let refreshSeconds = 5

    let position: UInt64
    let head: UInt64
    let requestsPerSecond: String
    let liveStreams: Int
    let pendingErasures: Int
    let projections: [ProjectionsPage.ReadModel]
    let deliveries: [Outbox]

    static let template = """
        {{<layout}}
        {{$content}}
        {{#page}}
        <p class="notice">At log position {{position}}, refreshed every {{refreshSeconds}} s.</p>
        <section aria-labelledby="server">
        <h2 id="server">Server</h2>
        <dl>
        <dt>Log head</dt><dd>{{head}}</dd>
        <dt>Requests/s</dt><dd>{{requestsPerSecond}}</dd>
        <dt>Open live streams</dt><dd>{{liveStreams}}</dd>
        <dt>Pending erasures</dt><dd><a href="/admin/erasures">{{pendingErasures}}</a></dd>
        </dl>
        </section>
        <section aria-labelledby="read-models">
        <h2 id="read-models">Read models</h2>
        <table>
        <thead><tr><th scope="col">Name</th><th scope="col">Position</th><th scope="col">Lag</th>\
        <th scope="col">State</th><th scope="col">Events/s</th></tr></thead>
        <tbody>
        {{#projections}}<tr><td>{{name}}</td><td>{{position}}</td><td>{{lag}}</td><td>{{state}}</td>\
        <td>{{eventsPerSecond}}</td></tr>{{/projections}}
        </tbody>
        </table>
        </section>
        <section aria-labelledby="backlogs">
        <h2 id="backlogs">Deliveries</h2>
        <table>
        <thead><tr><th scope="col">Outbox</th><th scope="col">Sending</th><th scope="col">Delivered</th>\
        <th scope="col">Pending</th><th scope="col">Failing</th><th scope="col">Last error</th></tr></thead>
        <tbody>
        {{#deliveries}}<tr><td>{{name}}</td><td>{{sending}}</td><td>{{delivered}}</td><td>{{pending}}</td>\
        <td>{{failing}}</td><td>{{lastError}}</td></tr>{{/deliveries}}
        {{^deliveries}}<tr><td colspan="6">Neither webhooks nor push are configured.</td></tr>{{/deliveries}}
        </tbody>
        </table>
        </section>
        {{/page}}
        {{/content}}
        {{/layout}}
        """
}

extension ConsoleRoutes {
    func addOverview(to console: RouterGroup<Context>) {
        page(console, "overview") { _, _ in
            ConsoleView(
                title: "Overview", template: "overview", page: try overview(),
                refreshSeconds: OverviewPage.refreshSeconds)
        }
    }

    private func overview() throws -> OverviewPage {
        let status = OperationsRoutes.status(of: backend)
        var outboxes: [OverviewPage.Outbox] = []
        if let webhooks = deliveries.webhooks {
            let found = try webhooks.status()
            outboxes.append(
                OverviewPage.Outbox(
                    name: "Webhooks", sending: "yes", delivered: found.delivered, pending: found.pending,
                    failing: found.failing, lastError: found.lastError ?? ""))
        }
        if let pushes = deliveries.pushes {
            let found = try pushes.status()
            outboxes.append(
                OverviewPage.Outbox(
                    name: "Push", sending: deliveries.pushTurn?.isSending == true ? "yes" : "no",
                    delivered: found.delivered, pending: found.pending, failing: found.failing,
                    lastError: found.lastError ?? ""))
        }
        return OverviewPage(
            position: backend.projections.position.rawValue, head: backend.log.head.rawValue,
            requestsPerSecond: String(format: "%.1f", backend.metrics.requestsPerSecond),
            liveStreams: backend.metrics.openLiveStreams,
            pendingErasures: try backend.commands.erasures().count { $0.completedAt == nil },
            projections: status.projections.map(ProjectionsPage.ReadModel.init),
            deliveries: outboxes)
    }
}
