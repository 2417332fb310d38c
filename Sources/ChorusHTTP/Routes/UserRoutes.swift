import ChorusDomain
import ChorusLog
import ChorusProjections
import Hummingbird

/// The caller's own profile, other users' profiles and tabs, search, and follows.
struct UserRoutes {
    let endpoints: Endpoints

    /// `PATCH /v1/me`: only the fields present change; `"profileImage": null` removes the image.
    struct ProfileChanges: Decodable {
        var name: String?
        var major: String?
        var bio: String?
        var profileImage: ProfileImageChange?
        var handle: String?
        var isPrivate: Bool?

        private enum CodingKeys: String, CodingKey {
            case name, major, bio, profileImage, handle
            case isPrivate = "private"
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            name = try container.decodeIfPresent(String.self, forKey: .name)
            major = try container.decodeIfPresent(String.self, forKey: .major)
            bio = try container.decodeIfPresent(String.self, forKey: .bio)
            handle = try container.decodeIfPresent(String.self, forKey: .handle)
            isPrivate = try container.decodeIfPresent(Bool.self, forKey: .isPrivate)
            if container.contains(.profileImage) {
                if try container.decodeNil(forKey: .profileImage) {
                    profileImage = .remove
                } else {
                    let text = try container.decode(String.self, forKey: .profileImage)
                    guard let media = MediaID(text) else {
                        throw APIError(DomainError(.unknownMedia, "no media \(text)"))
                    }
                    profileImage = .set(media)
                }
            }
        }
    }

    func add(to group: RouterGroup<ChorusRequestContext>) {
        let renderer = endpoints.renderer
        group.get("me") { request, context in
            let caller = try context.requireCaller()
            return try await endpoints.read(request) { view in
                renderer.profile(try Self.require(view.profile(caller.user, viewer: caller.user), "user"))
            }
        }
        group.patch("me") { request, context in
            let caller = try context.requireCaller()
            let (changes, bytes) = try await JSONBody.decode(ProfileChanges.self, from: request)
            let command = Command.editProfile(
                user: caller.user, name: changes.name, major: changes.major, bio: changes.bio,
                profileImage: changes.profileImage, handle: changes.handle, isPrivate: changes.isPrivate)
            return try await endpoints.write(request, context: context, requestBody: bytes, command: command) {
                view, _ in
                renderer.profile(try Self.require(view.profile(caller.user, viewer: caller.user), "user"))
            }
        }
        group.get("users/by-handle/:handle") { request, context in try await profile(byHandle: request, context) }
        group.get("users/:id") { request, context in
            let caller = try context.requireCaller()
            let user = try Endpoints.pathID(context, "id", as: UserID.self)
            return try await endpoints.read(request) { view in
                guard try !view.isDeletedAccount(user) else {
                    throw APIError(DomainError(.gone, "user \(user) was deleted"))
                }
                return renderer.profile(try Self.require(view.profile(user, viewer: caller.user), "user"))
            }
        }
        group.get("users/:id/posts") { request, context in
            let kind = try Endpoints.postKind(request)
            return try await postTab(request, context) { view, user, viewer, page, each in
                try view.posts(by: user, kind: kind, viewer: viewer, page: page, each)
            }
        }
        group.get("users/:id/likes") { request, context in
            try await postTab(request, context) { view, user, viewer, page, each in
                try view.likedPosts(by: user, viewer: viewer, page: page, each)
            }
        }
        group.get("users/:id/followers") { request, context in
            try await userTab(request, context) { view, user, viewer, page in
                try view.followers(of: user, viewer: viewer, page: page)
            }
        }
        group.get("users/:id/following") { request, context in
            try await userTab(request, context) { view, user, viewer, page in
                try view.following(of: user, viewer: viewer, page: page)
            }
        }
        group.put("users/:id/block") { request, context in try await relation(request, context, .block, on: true) }
        group.delete("users/:id/block") { request, context in try await relation(request, context, .block, on: false) }
        group.put("users/:id/mute") { request, context in try await relation(request, context, .mute, on: true) }
        group.delete("users/:id/mute") { request, context in try await relation(request, context, .mute, on: false) }
        endpoints.getPage(
            group, "me/blocks", { view, caller, page in try view.blockedUsers(of: caller.user, page: page) },
            render: renderer.user)
        endpoints.getPage(
            group, "me/mutes", { view, caller, page in try view.mutedUsers(of: caller.user, page: page) },
            render: renderer.user)
        group.get("search/users") { request, context in
            let caller = try context.requireCaller()
            let page = try Endpoints.page(request)
            // No query, or an empty one, lists every user.
            let query = request.uri.queryParameters["q"].map(String.init) ?? ""
            return try await endpoints.read(request) { view in
                renderer.page(try view.searchUsers(query, caller: caller.user, page: page), renderer.user)
            }
        }
        group.put("users/:id/follow") { request, context in try await follow(request, context, following: true) }
        group.delete("users/:id/follow") { request, context in try await follow(request, context, following: false) }
    }

    /// `GET /v1/users/by-handle/{handle}`: the profile of the account whose handle it is now.
    private func profile(byHandle request: Request, _ context: ChorusRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let handle = context.parameters.get("handle") ?? ""
        return try await endpoints.read(request) { view in
            guard let user = try view.user(withHandle: handle) else { throw APIError.notFound("no user @\(handle)") }
            return endpoints.renderer.profile(try Self.require(view.profile(user, viewer: caller.user), "user"))
        }
    }

    private func follow(_ request: Request, _ context: ChorusRequestContext, following: Bool) async throws -> Response {
        let caller = try context.requireCaller()
        let user = try Endpoints.pathID(context, "id", as: UserID.self)
        let command: Command =
            following
            ? .follow(follower: caller.user, followee: user) : .unfollow(follower: caller.user, followee: user)
        do {
            return try await endpoints.write(request, context: context, command: command) { view, _ in
                let profile = try Self.require(view.profile(user, viewer: caller.user), "user")
                return FollowJSON(
                    following: profile.isFollowed, requested: profile.followRequested, followers: profile.followers)
            }
        } catch let error as DomainError where error.code == .unknownUser {
            throw APIError.notFound("no user \(user)")
        }
    }

    enum Relation { case block, mute }

    /// Blocks or mutes the user of the path, or lifts it; answers `{blocked}` or `{muted}` as it stands after.
    private func relation(_ request: Request, _ context: ChorusRequestContext, _ relation: Relation, on: Bool)
        async throws -> Response
    {
        let caller = try context.requireCaller()
        let user = try Endpoints.pathID(context, "id", as: UserID.self)
        let command: Command =
            switch (relation, on) {
            case (.block, true): .block(blocker: caller.user, blocked: user)
            case (.block, false): .unblock(blocker: caller.user, blocked: user)
            case (.mute, true): .mute(muter: caller.user, muted: user)
            case (.mute, false): .unmute(muter: caller.user, muted: user)
            }
        do {
            return try await endpoints.write(request, context: context, command: command) { view, _ in
                switch relation {
                case .block:
                    RelationJSON(name: "blocked", value: try view.block(between: caller.user, and: user).blocked)
                case .mute: RelationJSON(name: "muted", value: try view.hasMuted(caller.user, user))
                }
            }
        } catch let error as DomainError where error.code == .unknownUser {
            throw APIError.notFound("no user \(user)")
        }
    }

    private func postTab(
        _ request: Request, _ context: ChorusRequestContext,
        _ tab:
            @escaping (borrowing ReadView, UserID, UserID, PageRequest, (borrowing StoredPost) throws -> Void) throws
            -> PageEnd?
    ) async throws -> Response {
        let caller = try context.requireCaller()
        let user = try Endpoints.pathID(context, "id", as: UserID.self)
        let page = try Endpoints.page(request)
        let renderer = endpoints.renderer
        return try await endpoints.readPage(request, caller: caller) { view, json in
            guard try renderer.writePostPage(to: &json, { try tab(view, user, caller.user, page, $0) }) else {
                throw APIError.notFound("no such user")
            }
        }
    }

    private func userTab(
        _ request: Request, _ context: ChorusRequestContext,
        _ tab: (borrowing ReadView, UserID, UserID, PageRequest) throws -> Page<UserSummary>?
    ) async throws -> Response {
        let caller = try context.requireCaller()
        let user = try Endpoints.pathID(context, "id", as: UserID.self)
        let page = try Endpoints.page(request)
        let renderer = endpoints.renderer
        return try await endpoints.read(request) { view in
            renderer.page(try Self.require(tab(view, user, caller.user, page), "user"), renderer.user)
        }
    }

    @discardableResult
    static func require<T>(_ value: T?, _ what: String) throws -> T {
        guard let value else { throw APIError.notFound("no such \(what)") }
        return value
    }
}

/// `{"blocked": bool}` or `{"muted": bool}`.
struct RelationJSON: JSONWritable {
    let name: StaticString
    let value: Bool

    func write(to json: inout JSONWriter) {
        json.object { $0.field(name, value) }
    }
}
