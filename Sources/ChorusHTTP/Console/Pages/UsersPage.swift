import ChorusBackend
import ChorusDomain
import ChorusLog
import ChorusProjections
import Foundation
import Hummingbird

/// Users: a user looked up by id, handle or e-mail, with their profile as they see it themselves, their counts,
/// sessions and devices, and "Suspend" or "Unsuspend" (`POST /v1/admin/users/{id}/suspend|unsuspend`). Anything else
/// typed searches names, as the apps' user search does; nothing typed lists everyone.
struct UsersPage {
    struct Listed {
        let id: String
        let name: String
        let handle: String
    }

    struct Account {
        let id: String
        let name: String
        let handle: String
        let email: String
        let major: String
        let bio: String
        let isPrivate: Bool
        let suspended: Bool
        let followers: UInt64
        let following: UInt64
        let posts: UInt64
        let sessions: [Session]
        let devices: [Device]
    }

    struct Session {
        let id: String
        let startedAt: String
        let lastSeenAt: String
    }

    struct Device {
        let id: String
        let platform: String
        let locale: String
        let lastSeenAt: String
    }

    /// A deleted account: its id, and its erasure as Erasures lists it.
    struct Deleted {
        let id: String
        let erasure: ErasuresPage.Row?
    }

    let query: String
    let account: Account?
    /// A deleted account looked up, which shows nothing of its own.
    let deleted: Deleted?
    let listed: [Listed]
    let olderLink: String?

    static let template = """
        {{<layout}}
        {{$content}}
        {{#page}}
        <form method="get" action="/admin/users" class="filters" role="search">
        <label>User id, handle or e-mail<input name="q" value="{{query}}" size="36"></label>
        <button type="submit">Look up</button>
        </form>
        {{#deleted}}
        <p role="status">User {{id}} deleted their account{{#erasure}} at {{requestedAt}}; \
        {{#completedAt}}its personal data was erased at {{.}}{{/completedAt}}\
        {{^completedAt}}the erasure of its personal data is pending{{/completedAt}}{{/erasure}}. \
        Nothing of it is left to show.</p>
        <p><a href="/admin/log?user={{id}}">Their events in the log</a> · <a href="/admin/erasures">Erasures</a></p>
        {{/deleted}}
        {{#account}}
        <h2>{{name}} <span class="notice">@{{handle}}</span></h2>
        {{#suspended}}<p role="status" class="error">Suspended</p>{{/suspended}}
        <dl>
        <dt>Id</dt><dd>{{id}}</dd>
        <dt>E-mail</dt><dd>{{email}}</dd>
        <dt>Major</dt><dd>{{major}}</dd>
        <dt>Bio</dt><dd>{{bio}}</dd>
        <dt>Private account</dt><dd>{{#isPrivate}}yes{{/isPrivate}}{{^isPrivate}}no{{/isPrivate}}</dd>
        <dt>Followers</dt><dd>{{followers}}</dd>
        <dt>Following</dt><dd>{{following}}</dd>
        <dt>Posts</dt><dd>{{posts}}</dd>
        </dl>
        <p><a href="/admin/log?user={{id}}">Their events in the log</a></p>
        <form method="post" action="/admin/users/{{id}}/{{#suspended}}unsuspend{{/suspended}}\
        {{^suspended}}suspend{{/suspended}}">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <button type="submit">{{#suspended}}Unsuspend{{/suspended}}{{^suspended}}Suspend{{/suspended}}</button>
        </form>
        <h2>Sessions</h2>
        <table>
        <thead><tr><th scope="col">Session</th><th scope="col">Started</th><th scope="col">Last seen</th></tr></thead>
        <tbody>
        {{#sessions}}<tr><td>{{id}}</td><td>{{startedAt}}</td><td>{{lastSeenAt}}</td></tr>{{/sessions}}
        {{^sessions}}<tr><td colspan="3">No session is open.</td></tr>{{/sessions}}
        </tbody>
        </table>
        <h2>Devices</h2>
        <table>
        <thead><tr><th scope="col">Device</th><th scope="col">Platform</th><th scope="col">Locale</th>\
        <th scope="col">Last registered</th></tr></thead>
        <tbody>
        {{#devices}}<tr><td>{{id}}</td><td>{{platform}}</td><td>{{locale}}</td><td>{{lastSeenAt}}</td></tr>{{/devices}}
        {{^devices}}<tr><td colspan="4">No device gets pushes.</td></tr>{{/devices}}
        </tbody>
        </table>
        {{/account}}
        {{^account}}{{^deleted}}
        <table>
        <thead><tr><th scope="col">Name</th><th scope="col">Handle</th><th scope="col">Id</th></tr></thead>
        <tbody>
        {{#listed}}<tr><td><a href="/admin/users?q={{id}}">{{name}}</a></td><td>@{{handle}}</td><td>{{id}}</td></tr>\
        {{/listed}}
        {{^listed}}<tr><td colspan="3">No user has that id, handle, e-mail or name.</td></tr>{{/listed}}
        </tbody>
        </table>
        {{#olderLink}}<p><a href="{{.}}">More users</a></p>{{/olderLink}}
        {{/deleted}}{{/account}}
        {{/page}}
        {{/content}}
        {{/layout}}
        """
}

extension ConsoleRoutes {
    func addUsers(to console: RouterGroup<Context>) {
        page(console, "users") { request, _ in
            let query = (request.uri.queryParameters["q"].map(String.init) ?? "").trimmingCharacters(in: .whitespaces)
            let page = try Endpoints.page(request)
            return ConsoleView(title: "Users", template: "users", page: try usersPage(query, page: page))
        }
        for (path, suspend) in [("users/:id/suspend", true), ("users/:id/unsuspend", false)] {
            action(console, RouterPath(path)) { _, context, _ in
                let user = try Endpoints.pathID(context, "id", as: UserID.self)
                try await execute(suspend ? .suspend(user: user) : .unsuspend(user: user))
                return "/admin/users?q=\(user)"
            }
        }
    }

    private func usersPage(_ query: String, page: PageRequest) throws -> UsersPage {
        let byEmail = query.dropFirst().contains("@") ? try backend.commands.user(withEmail: query) : nil
        return try backend.readModels.snapshot { view -> UsersPage in
            let handle = query.hasPrefix("@") ? String(query.dropFirst()) : query
            let byID = try UserID(query).flatMap { id in
                try view.profile(id, viewer: id) != nil || view.isDeletedAccount(id) ? id : nil
            }
            let user = try byEmail ?? byID ?? (handle.isEmpty ? nil : try view.user(withHandle: handle))
            guard let user else {
                let found = try view.searchUsers(handle, caller: nil, page: page)
                return UsersPage(
                    query: query, account: nil, deleted: nil,
                    listed: found.items.map { UsersPage.Listed(id: $0.id.rawValue, name: $0.name, handle: $0.handle) },
                    olderLink: found.nextCursor.map { "/admin/users?q=\(Self.queryEscaped(query))&cursor=\($0)" })
            }
            guard let profile = try view.profile(user, viewer: user) else {
                let erasure = try backend.commands.erasures().first { $0.user == user }
                let deleted = UsersPage.Deleted(
                    id: user.rawValue, erasure: try erasure.map { try ErasuresPage.Row($0, log: backend.log) })
                return UsersPage(query: query, account: nil, deleted: deleted, listed: [], olderLink: nil)
            }
            return UsersPage(
                query: query,
                account: try account(profile, sessions: try backend.sessions(of: user), in: view),
                deleted: nil, listed: [], olderLink: nil)
        }.answer
    }

    private func account(
        _ profile: Profile, sessions: [(session: SessionID, startedAt: EventTime, lastSeenAt: EventTime)],
        in view: borrowing ReadView
    ) throws -> UsersPage.Account {
        let user = profile.summary.id
        let devices = try view.devices(of: user, page: PageRequest(limit: PageRequest.limits.upperBound)).items
        return UsersPage.Account(
            id: user.rawValue, name: profile.summary.name, handle: profile.summary.handle, email: profile.email ?? "",
            major: profile.summary.major, bio: profile.bio, isPrivate: profile.isPrivate,
            suspended: try view.isSuspended(user), followers: profile.followers, following: profile.following,
            posts: profile.posts,
            sessions: sessions.map {
                UsersPage.Session(
                    id: $0.session.rawValue, startedAt: $0.startedAt.rfc3339, lastSeenAt: $0.lastSeenAt.rfc3339)
            },
            devices: devices.map {
                UsersPage.Device(
                    id: $0.id.rawValue, platform: $0.platform.rawValue, locale: $0.locale ?? "",
                    lastSeenAt: $0.lastSeenAt.rfc3339)
            })
    }

    static func queryEscaped(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(.init(charactersIn: "-._~"))) ?? ""
    }
}
