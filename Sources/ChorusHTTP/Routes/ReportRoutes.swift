import ChorusBackend
import ChorusDomain
import ChorusLog
import ChorusProjections
import Hummingbird

/// Reports by users, and the admins' queue: resolving a report deletes content or suspends its author; admins suspend
/// users and lift suspensions.
struct ReportRoutes {
    let endpoints: Endpoints

    struct NewReport: Decodable {
        let postId: String?
        let commentId: String?
        let userId: String?
        let reason: String
        let details: String?
    }

    struct Resolution: Decodable {
        let action: String
    }

    func add(to signedIn: RouterGroup<ChorusRequestContext>) {
        signedIn.post("reports") { request, context in
            let caller = try context.requireCaller()
            try Limiters.spend(endpoints.limiters.reportsPerUser, caller.user.rawValue, "reports by this account")
            let (body, bytes) = try await JSONBody.decode(NewReport.self, from: request)
            let named = [body.postId, body.commentId, body.userId].compactMap { $0 }
            guard named.count == 1 else {
                throw APIError(DomainError(.invalidField, "a report names one of postId, commentId or userId"))
            }
            let reason: ReportReason = try Endpoints.choice(body.reason, field: "reason")
            // A malformed id names nothing, like an unknown one.
            let subject: ReportSubject =
                if let post = body.postId {
                    .post(PostID(post) ?? PostID(unchecked: "-"))
                } else if let comment = body.commentId {
                    .comment(CommentID(comment) ?? CommentID(unchecked: "-"))
                } else {
                    .user(UserID(body.userId ?? "") ?? UserID(unchecked: "-"))
                }
            let command = Command.fileReport(
                reporter: caller.user, subject: subject, reason: reason, details: body.details)
            return try await endpoints.write(
                request, context: context, requestBody: bytes, status: .created, command: command
            ) { _, result in ReportCreatedJSON(id: result.createdID ?? "") }
        }
    }

    func addAdmin(to admin: RouterGroup<ChorusRequestContext>) {
        let backend = endpoints.backend
        admin.get("reports") { request, context in
            let page = try Endpoints.page(request)
            let resolved: Bool
            switch request.uri.queryParameters["state"] {
            case nil, "open": resolved = false
            case "resolved": resolved = true
            case let other?: throw APIError.badRequest("state is open or resolved, not \(other)")
            }
            return try await endpoints.read(request) { view in
                endpoints.renderer.page(try view.reports(resolved: resolved, page: page), ReportJSON.init)
            }
        }
        admin.post("reports/:id/resolve") { request, context in
            let report = try Endpoints.pathID(context, "id", as: ReportID.self)
            let (resolution, _) = try await JSONBody.decode(Resolution.self, from: request)
            let action: ReportAction = try Endpoints.choice(resolution.action, field: "action")
            let result = try await backend.execute(
                .resolveReport(report: report, action: action), idempotencyKey: try Endpoints.idempotencyKey(request))
            let body = try await endpoints.render(after: result) { view, _, json in
                ReportJSON(try UserRoutes.require(view.report(report), "report")).write(to: &json)
            }
            return Endpoints.json(.ok, body, position: result.position)
        }
        admin.post("users/:id/suspend") { request, context in
            try await suspension(request, context, suspended: true)
        }
        admin.post("users/:id/unsuspend") { request, context in
            try await suspension(request, context, suspended: false)
        }
    }

    /// Suspends the user of the path, or lifts it; answers `{suspended}` as it stands after.
    private func suspension(_ request: Request, _ context: ChorusRequestContext, suspended: Bool) async throws
        -> Response
    {
        let user = try Endpoints.pathID(context, "id", as: UserID.self)
        let result: CommandResult
        do {
            result = try await endpoints.backend.execute(
                suspended ? .suspend(user: user) : .unsuspend(user: user),
                idempotencyKey: try Endpoints.idempotencyKey(request))
        } catch let error as DomainError where error.code == .unknownUser {
            throw APIError.notFound("no user \(user)")
        }
        let body = try await endpoints.render(after: result) { view, _, json in
            RelationJSON(name: "suspended", value: try view.isSuspended(user)).write(to: &json)
        }
        return Endpoints.json(.ok, body, position: result.position)
    }
}

struct ReportCreatedJSON: JSONWritable {
    let id: String

    func write(to json: inout JSONWriter) {
        json.object { $0.field("id", id) }
    }
}

/// A report in the admins' queue; its target `{type, id}`, with `postId` for a comment.
struct ReportJSON: JSONWritable {
    let report: Report

    init(_ report: Report) { self.report = report }

    func write(to json: inout JSONWriter) {
        json.object { body in
            body.field("id", report.id.rawValue)
            body.field("reporter") { json in
                json.object {
                    $0.field("id", report.reporter.id.rawValue)
                    $0.field("name", report.reporter.name)
                }
            }
            body.field("target") { json in
                json.object {
                    switch report.target {
                    case .post(let post):
                        $0.field("type", "post")
                        $0.field("id", post.rawValue)
                    case .comment(let post, let comment):
                        $0.field("type", "comment")
                        $0.field("id", comment.rawValue)
                        $0.field("postId", post.rawValue)
                    case .user(let user):
                        $0.field("type", "user")
                        $0.field("id", user.rawValue)
                    }
                }
            }
            body.field("reason", report.reason.rawValue)
            body.field("details", report.details)
            body.field("createdAt", report.createdAt)
            body.field("resolution", report.resolution?.rawValue)
        }
    }
}
