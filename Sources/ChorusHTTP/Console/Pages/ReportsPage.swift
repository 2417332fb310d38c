import ChorusBackend
import ChorusDomain
import ChorusProjections
import Hummingbird

/// Reports: the open ones (or the resolved), newest first, each with what it reports shown inline as it stands, and
/// the three resolutions of `POST /v1/admin/reports/{id}/resolve`: "Dismiss", "Remove content" (a post or a comment)
/// and "Suspend user" (the content's author).
struct ReportsPage {
    struct Item {
        let id: String
        let reason: String
        let details: String?
        let createdAt: String
        let reporter: Person
        let target: String
        let content: Content
        let resolution: String?
        let removable: Bool
    }

    struct Person {
        let id: String
        let name: String
    }

    /// What the report is about, as it stands now.
    struct Content {
        let author: Person?
        let lines: [String]
        /// Why there is nothing to show: deleted, or never there.
        let gone: String?
    }

    let showingOpen: Bool
    let reports: [Item]
    let olderLink: String?

    static let template = """
        {{<layout}}
        {{$content}}
        {{#page}}
        <p><a href="/admin/reports?state=open"{{#showingOpen}} aria-current="page"{{/showingOpen}}>Open</a> · \
        <a href="/admin/reports?state=resolved"{{^showingOpen}} aria-current="page"{{/showingOpen}}>Resolved</a></p>
        {{#reports}}
        <article class="report" aria-labelledby="report-{{id}}">
        <h2 id="report-{{id}}">{{reason}}: {{target}}</h2>
        <p>Reported by <a href="/admin/users?q={{reporter.id}}">{{reporter.name}}</a> at {{createdAt}}.\
        {{#details}} “{{.}}”{{/details}}</p>
        {{#content}}
        <div class="content">{{#author}}<p>By <a href="/admin/users?q={{id}}">{{name}}</a></p>{{/author}}\
        {{#lines}}<p>{{.}}</p>{{/lines}}{{#gone}}<p class="notice">{{.}}</p>{{/gone}}</div>
        {{/content}}
        {{#resolution}}<p role="status">Resolved: {{.}}</p>{{/resolution}}
        {{^resolution}}
        <form method="post" action="/admin/reports/{{id}}/resolve" class="actions">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <button type="submit" name="action" value="dismiss">Dismiss</button>
        {{#removable}}<button type="submit" name="action" value="remove_content">Remove content</button>{{/removable}}
        <button type="submit" name="action" value="suspend_user">Suspend user</button>
        </form>
        {{/resolution}}
        </article>
        {{/reports}}
        {{^reports}}<p>No reports here.</p>{{/reports}}
        {{#olderLink}}<p><a href="{{.}}">Older reports</a></p>{{/olderLink}}
        {{/page}}
        {{/content}}
        {{/layout}}
        """
}

extension ConsoleRoutes {
    func addReports(to console: RouterGroup<Context>) {
        page(console, "reports") { request, _ in
            let state = request.uri.queryParameters["state"].map(String.init) ?? "open"
            guard state == "open" || state == "resolved" else {
                throw ConsoleRefusal(.badRequest, "state is open or resolved, not \(state)")
            }
            let page = try Endpoints.page(request)
            let found = try backend.readModels.snapshot { view in
                let reports = try view.reports(resolved: state == "resolved", page: page)
                return (try reports.items.map { try Self.item($0, in: view) }, reports.nextCursor)
            }.answer
            return ConsoleView(
                title: "Reports", template: "reports",
                page: ReportsPage(
                    showingOpen: state == "open", reports: found.0,
                    olderLink: found.1.map { "/admin/reports?state=\(state)&cursor=\($0)" }))
        }
        action(console, "reports/:id/resolve") { _, context, form in
            let report = try Endpoints.pathID(context, "id", as: ReportID.self)
            let action: ReportAction = try Endpoints.choice(form["action"] ?? "", field: "action")
            try await execute(.resolveReport(report: report, action: action))
            return "/admin/reports"
        }
    }

    private static func item(_ report: Report, in view: borrowing ReadView) throws -> ReportsPage.Item {
        let (target, content, removable) = try content(of: report.target, in: view)
        return ReportsPage.Item(
            id: report.id.rawValue, reason: report.reason.rawValue,
            details: report.details.isEmpty ? nil : report.details,
            createdAt: report.createdAt.rfc3339, reporter: person(report.reporter), target: target, content: content,
            resolution: report.resolution?.rawValue, removable: removable)
    }

    /// What `target` names, as it stands: its label, its content, and whether "Remove content" applies.
    private static func content(of target: ReportTarget, in view: borrowing ReadView) throws -> (
        String, ReportsPage.Content, Bool
    ) {
        switch target {
        case .post(let id):
            guard let post = try view.postForReview(id) else {
                return ("post \(id)", .init(author: nil, lines: [], gone: "This post was deleted."), true)
            }
            let images = post.media.enumerated().map { "Image \($0.offset + 1): \($0.element.alt ?? "no alt text")" }
            let lines = [post.caption, post.text].filter { !$0.isEmpty } + images
            return ("post \(id)", .init(author: person(post.author), lines: lines, gone: nil), true)
        case .comment(let post, let id):
            guard let comment = try view.comment(id, on: post) else {
                return ("comment \(id)", .init(author: nil, lines: [], gone: "This comment was deleted."), true)
            }
            return ("comment \(id)", .init(author: person(comment.author), lines: [comment.text], gone: nil), true)
        case .user(let id):
            guard let profile = try view.profile(id, viewer: id) else {
                return ("user \(id)", .init(author: nil, lines: [], gone: "This account was deleted."), false)
            }
            let summary = profile.summary
            let lines = ["\(summary.name) @\(summary.handle)", summary.major, profile.bio].filter { !$0.isEmpty }
            return ("user \(id)", .init(author: person(summary), lines: lines, gone: nil), false)
        }
    }

    static func person(_ user: UserSummary) -> ReportsPage.Person {
        ReportsPage.Person(id: user.id.rawValue, name: user.deleted ? "(deleted account)" : user.name)
    }
}
