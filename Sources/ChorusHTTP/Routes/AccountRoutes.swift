import ChorusBackend
import ChorusDomain
import ChorusLog
import ChorusProjections
import Hummingbird

/// The caller's password and sessions.
struct AccountRoutes {
    let endpoints: Endpoints

    struct PasswordChange: Decodable {
        let currentPassword: String
        let newPassword: String
    }

    func add(to group: RouterGroup<ChorusRequestContext>) {
        group.post("me/password") { request, context in
            let caller = try context.requireCaller()
            let (body, _) = try await JSONBody.decode(PasswordChange.self, from: request)
            let result = try await endpoints.backend.execute(
                .changePassword(
                    user: caller.user, session: caller.session, currentPassword: body.currentPassword,
                    newPassword: body.newPassword),
                idempotencyKey: try Endpoints.idempotencyKey(request))
            return Endpoints.json(.noContent, [], position: result.position)
        }
        group.get("me/sessions") { request, context in
            let caller = try context.requireCaller()
            let request = try Endpoints.page(request)
            let sessions = try endpoints.backend.sessions(of: caller.user).map { found in
                (
                    id: found.session,
                    item: SessionJSON(
                        id: found.session.rawValue, createdAt: found.startedAt, lastSeenAt: found.lastSeenAt,
                        current: found.session == caller.session)
                )
            }
            let page = Page(of: sessions, request: request)
            let body = JSONBody.encode(PageJSON(items: page.items, nextCursor: page.nextCursor?.description))
            return Endpoints.json(.ok, body, position: endpoints.backend.log.head)
        }
        group.delete("me/sessions/:id") { request, context in
            let caller = try context.requireCaller()
            let session = try Endpoints.pathID(context, "id", as: SessionID.self)
            // Another user's session, or one that ended, is not the caller's to see.
            guard try endpoints.backend.sessions(of: caller.user).contains(where: { $0.session == session }) else {
                throw APIError.notFound("no session \(session) of yours")
            }
            let result = try await endpoints.backend.execute(
                .logOut(user: caller.user, session: session), idempotencyKey: try Endpoints.idempotencyKey(request))
            return Endpoints.json(.noContent, [], position: result.position)
        }
    }
}

/// One of the caller's sessions.
struct SessionJSON: JSONWritable {
    let id: String
    let createdAt: EventTime
    let lastSeenAt: EventTime
    let current: Bool

    func write(to json: inout JSONWriter) {
        json.object {
            $0.field("id", id)
            $0.field("createdAt", createdAt)
            $0.field("lastSeenAt", lastSeenAt)
            $0.field("current", current)
        }
    }
}
