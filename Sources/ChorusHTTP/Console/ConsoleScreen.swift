import ChorusDomain
import HTTPTypes

/// What a console page answers: its template, the object the template shows, and where it sits in the navigation.
struct ConsoleView {
    let title: String
    /// The name of its template in ``ConsoleTemplates``.
    let template: String
    /// What the template shows, under `page`.
    let page: Any
    /// The navigation entry it belongs to: an event's detail belongs to Log.
    var section: String
    /// Seconds until the page asks for itself again; nil for a page that stays as it is.
    var refreshSeconds: Int?
    var status: HTTPResponse.Status = .ok

    init(title: String, template: String, page: Any, section: String? = nil, refreshSeconds: Int? = nil) {
        self.title = title
        self.template = template
        self.page = page
        self.section = section ?? title
        self.refreshSeconds = refreshSeconds
    }
}

/// What the layout shows around every page. Mustache looks a name up on the innermost object first, then outwards:
/// inside `{{#page}}`, `{{csrf}}` is the screen's.
struct ConsoleScreen {
    /// The bar of pages, each by its name in the contract, and the sign-out form.
    struct Navigation {
        struct Link {
            let name: String
            let path: String
            let current: Bool
        }

        static let pages = [
            ("Overview", "/admin/overview"), ("Log", "/admin/log"), ("Projections", "/admin/projections"),
            ("Reports", "/admin/reports"), ("Users", "/admin/users"), ("Erasures", "/admin/erasures"),
            ("Deliveries", "/admin/deliveries"),
        ]

        let links: [Link]
        let csrf: String

        init(current: String, csrf: String) {
            links = Self.pages.map { Link(name: $0.0, path: $0.1, current: $0.0 == current) }
            self.csrf = csrf
        }
    }

    let title: String
    let navigation: Navigation?
    let error: String?
    /// What holds for every page of this server: that it is read-only.
    let notice: String?
    let csrf: String
    let refreshSeconds: Int?
    let page: Any

    static let readOnlyNotice =
        "This server is read-only: it shows a past state of the log, and its buttons change nothing."
}

/// A page's refusal, shown as a page of its own with its status: a malformed filter, an unknown user, a form that
/// expired.
struct ConsoleRefusal: Error {
    let status: HTTPResponse.Status
    let message: String

    init(_ status: HTTPResponse.Status, _ message: String) {
        self.status = status
        self.message = message
    }

    /// A refusal the API would answer, shown as a page: a malformed query, a command the domain refused.
    init?(_ error: any Error) {
        switch error {
        case let refusal as ConsoleRefusal: self = refusal
        case let error as APIError: self.init(error.status, error.message)
        case let error as DomainError: self.init(APIError(error).status, error.message)
        default: return nil
        }
    }

    static let expiredForm = ConsoleRefusal(.forbidden, "The form had expired or did not come from this console.")
    static let readOnly = ConsoleRefusal(.forbidden, "Refused: " + ReadOnlyMiddleware.refusal + ".")

    var view: ConsoleView {
        var view = ConsoleView(
            title: status == .notFound ? "Not found" : "Refused", template: "refusal", page: ["message": message],
            section: "")
        view.status = status
        return view
    }
}
