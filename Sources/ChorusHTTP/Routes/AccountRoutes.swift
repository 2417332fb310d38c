import ChorusBackend
import ChorusDomain
import ChorusLog
import ChorusProjections
import Hummingbird

/// The caller's password, sessions and account; the admins' list of erasures.
struct AccountRoutes {
    let endpoints: Endpoints

    struct PasswordChange: Decodable {
        let currentPassword: String
        let newPassword: String
    }

    struct AccountDeletion: Decodable {
        let password: String
    }

    func add(to group: RouterGroup<ChorusRequestContext>) {
        group.delete("me") { request, context in
            let caller = try context.requireCaller()
            let (body, _) = try await JSONBody.decode(AccountDeletion.self, from: request)
            let result = try await endpoints.backend.execute(
                .deleteAccount(user: caller.user, password: body.password),
                idempotencyKey: try Endpoints.idempotencyKey(request))
            var json = JSONWriter()
            json.object { $0.field("erasure", "pending") }
            return Endpoints.json(.accepted, json.bytes, position: result.position)
        }
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
    }

    /// The caller's sessions: listed, and ended one by one.
    func addSessions(to group: RouterGroup<ChorusRequestContext>) {
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

extension AccountRoutes {
    func addAdmin(to admin: RouterGroup<ChorusRequestContext>) {
        let backend = endpoints.backend
        admin.get("erasures") { request, _ in
            let page = try Endpoints.page(request)
            let erasures = try backend.commands.erasures().map { erasure in
                (id: erasure.user, item: try ErasureJSON(erasure, log: backend.log))
            }
            let found = Page(of: erasures, request: page)
            let body = JSONBody.encode(PageJSON(items: found.items, nextCursor: found.nextCursor?.description))
            return Endpoints.json(.ok, body, position: backend.log.head)
        }
    }
}

/// An account deletion: when it was asked for, and when no file held the account's personal data any more.
struct ErasureJSON: JSONWritable {
    let userId: String
    let requestedAt: EventTime
    let completedAt: EventTime?

    init(_ erasure: DecisionState.Erasure, log: any EventLog) throws {
        func time(_ position: LogPosition) throws -> EventTime {
            guard let event = try log.event(at: position) else {
                throw APIError.unavailable("no event at position \(position)")
            }
            return event.recordedAt
        }
        userId = erasure.user.rawValue
        requestedAt = try time(erasure.requestedAt)
        completedAt = try erasure.completedAt.map(time)
    }

    func write(to json: inout JSONWriter) {
        json.object {
            $0.field("userId", userId)
            $0.field("requestedAt", requestedAt)
            $0.field("completedAt", completedAt)
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
