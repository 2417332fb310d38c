import ChorusBackend
import Hummingbird

/// Projections: each read model's state, and "Rebuild", the zero-downtime rebuild of `POST
/// /v1/admin/projections/rebuild`. While a rebuild runs the page asks for itself every second and shows how far it
/// got, until the new read models are swapped in.
struct ProjectionsPage {
    struct ReadModel {
        let name: String
        let position: UInt64
        let head: UInt64
        let lag: UInt64
        let state: String
        let eventsPerSecond: Int

        init(_ status: OperationsRoutes.ProjectionStatus) {
            (name, position, head, lag) = (status.name, status.position, status.head, status.lag)
            (state, eventsPerSecond) = (status.state, Int(status.eventsPerSecond))
        }
    }

    struct Progress {
        let replayed: Int
        let total: Int
        let percent: Int
    }

    let readModels: [ReadModel]
    let progress: Progress?
    let rebuilding: Bool
    /// How the last rebuild since the server started ended, if one did.
    let lastRebuild: String?

    static let template = """
        {{<layout}}
        {{$content}}
        {{#page}}
        <table>
        <thead><tr><th scope="col">Name</th><th scope="col">Position</th><th scope="col">Head</th>\
        <th scope="col">Lag</th><th scope="col">State</th><th scope="col">Events/s</th></tr></thead>
        <tbody>
        {{#readModels}}<tr><td>{{name}}</td><td>{{position}}</td><td>{{head}}</td><td>{{lag}}</td>\
        <td>{{state}}</td><td>{{eventsPerSecond}}</td></tr>{{/readModels}}
        </tbody>
        </table>
        {{#rebuilding}}
        <p role="status">Rebuilding: {{#progress}}{{replayed}} of {{total}} events replayed \
        <progress max="100" value="{{percent}}">{{percent}} %</progress>{{/progress}}\
        {{^progress}}starting{{/progress}}. The read models in service answer meanwhile; the new ones are swapped in \
        once they catch up.</p>
        {{/rebuilding}}
        {{^rebuilding}}
        {{#lastRebuild}}<p role="status">{{.}}</p>{{/lastRebuild}}
        <form method="post" action="/admin/projections/rebuild">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <button type="submit">Rebuild</button>
        </form>
        <p class="notice">Rebuild replays the whole log into new read models beside the ones in service, then swaps \
        them in: no downtime.</p>
        {{/rebuilding}}
        {{/page}}
        {{/content}}
        {{/layout}}
        """
}

extension ConsoleRoutes {
    func addProjections(to console: RouterGroup<Context>) {
        page(console, "projections") { _, _ in
            let found = projectionsPage()
            return ConsoleView(
                title: "Projections", template: "projections", page: found,
                refreshSeconds: found.rebuilding ? 1 : nil)
        }
        action(console, "projections/rebuild") { _, _, _ in
            backend.readModels.requestRebuild()
            return "/admin/projections"
        }
    }

    private func projectionsPage() -> ProjectionsPage {
        let readModels = backend.readModels
        let statuses = OperationsRoutes.status(of: backend).projections
        let lastRebuild: String? =
            switch readModels.rebuildState {
            case .finished(let position, let at):
                "The last rebuild was swapped in at \(at.rfc3339), at log position \(position)."
            case .failed(let reason): "The last rebuild failed: \(reason)"
            case .none, .rebuilding: nil
            }
        let rebuilding = if case .rebuilding = readModels.rebuildState { true } else { false }
        return ProjectionsPage(
            readModels: statuses.map(ProjectionsPage.ReadModel.init),
            progress: readModels.rebuildProgress.map {
                ProjectionsPage.Progress(
                    replayed: $0.replayed, total: $0.total, percent: $0.total > 0 ? $0.replayed * 100 / $0.total : 0)
            },
            rebuilding: rebuilding, lastRebuild: lastRebuild)
    }
}
