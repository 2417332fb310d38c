import ChorusBackend
import ChorusDomain
import ChorusLog
import Hummingbird

/// Erasures: each account deletion, newest first, and whether its erasure is complete (no file holds the account's
/// personal data any more) or still pending, as `GET /v1/admin/erasures` lists them.
struct ErasuresPage {
    struct Row {
        let userId: String
        let requestedAt: String
        let completedAt: String?

        init(_ erasure: DecisionState.Erasure, log: any EventLog) throws {
            let shown = try ErasureJSON(erasure, log: log)
            (userId, requestedAt, completedAt) = (shown.userId, shown.requestedAt.rfc3339, shown.completedAt?.rfc3339)
        }
    }

    /// Rows a page shows at most.
    static let limit = 200

    let pending: Int
    let total: Int
    let rows: [Row]
    /// How many rows show, when that is fewer than all.
    let shownOfMore: Int?

    static let template = """
        {{<layout}}
        {{$content}}
        {{#page}}
        <p role="status">{{pending}} pending of {{total}} account deletions.</p>
        {{#shownOfMore}}<p class="notice">The newest {{.}} are listed; \
        <code>GET /v1/admin/erasures</code> pages through them all.</p>{{/shownOfMore}}
        <table>
        <thead><tr><th scope="col">User</th><th scope="col">Deleted at</th><th scope="col">Erased at</th></tr></thead>
        <tbody>
        {{#rows}}<tr><td><a href="/admin/log?user={{userId}}">{{userId}}</a></td><td>{{requestedAt}}</td>\
        <td>{{#completedAt}}{{.}}{{/completedAt}}{{^completedAt}}pending{{/completedAt}}</td></tr>{{/rows}}
        {{^rows}}<tr><td colspan="3">No account was deleted.</td></tr>{{/rows}}
        </tbody>
        </table>
        {{/page}}
        {{/content}}
        {{/layout}}
        """
}

extension ConsoleRoutes {
    func addErasures(to console: RouterGroup<Context>) {
        page(console, "erasures") { _, _ in
            let erasures = try backend.commands.erasures().sorted { $0.requestedAt > $1.requestedAt }
            let rows = try erasures.prefix(ErasuresPage.limit).map { try ErasuresPage.Row($0, log: backend.log) }
            return ConsoleView(
                title: "Erasures", template: "erasures",
                page: ErasuresPage(
                    pending: erasures.count { $0.completedAt == nil }, total: erasures.count, rows: rows,
                    shownOfMore: rows.count < erasures.count ? rows.count : nil))
        }
    }
}
