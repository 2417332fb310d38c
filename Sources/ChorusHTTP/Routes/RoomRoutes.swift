import ChorusDomain
import ChorusProjections
import Hummingbird

/// Chat rooms: anyone may make one or join one; only members read and write its messages.
struct RoomRoutes {
    let endpoints: Endpoints

    struct NewRoom: Decodable {
        let name: String
    }

    struct NewMessage: Decodable {
        let text: String
    }

    func add(to group: RouterGroup<ChorusRequestContext>) {
        let renderer = endpoints.renderer
        group.post("rooms") { request, context in
            let caller = try context.requireCaller()
            try Limiters.spend(endpoints.limiters.roomsPerUser, caller.user.rawValue, "rooms made by this account")
            let (body, bytes) = try await JSONBody.decode(NewRoom.self, from: request)
            let command = Command.createRoom(creator: caller.user, name: body.name)
            return try await endpoints.write(
                request, context: context, requestBody: bytes, status: .created, command: command
            ) { view, result in
                let room = RoomID(unchecked: result.createdID ?? "")
                return renderer.room(try UserRoutes.require(view.room(room, viewer: caller.user), "room"))
            }
        }
        group.get("rooms") { request, context in
            let caller = try context.requireCaller()
            let page = try Endpoints.page(request)
            let all = try Self.scopeIsAll(request)
            return try await endpoints.read(request) { view in
                renderer.page(
                    all
                        ? try view.allRooms(viewer: caller.user, page: page)
                        : try view.rooms(of: caller.user, page: page),
                    renderer.room)
            }
        }
        group.get("rooms/:id") { request, context in
            let caller = try context.requireCaller()
            let room = try Endpoints.pathID(context, "id", as: RoomID.self)
            return try await endpoints.read(request) { view in
                renderer.room(try UserRoutes.require(view.room(room, viewer: caller.user), "room"))
            }
        }
        group.put("rooms/:id/membership") { request, context in try await membership(request, context, joined: true) }
        group.delete("rooms/:id/membership") { request, context in
            try await membership(request, context, joined: false)
        }
        group.post("rooms/:id/messages") { request, context in
            let caller = try context.requireCaller()
            let room = try Endpoints.pathID(context, "id", as: RoomID.self)
            try Limiters.spend(endpoints.limiters.messagesPerUser, caller.user.rawValue, "messages from this account")
            let (body, bytes) = try await JSONBody.decode(NewMessage.self, from: request)
            let command = Command.sendRoomMessage(from: caller.user, room: room, text: body.text)
            return try await Self.inPath(room) {
                try await endpoints.write(
                    request, context: context, requestBody: bytes, status: .created, command: command
                ) { view, result in
                    renderer.roomMessage(
                        try UserRoutes.require(view.roomMessage(in: room, at: result.position), "message"))
                }
            }
        }
        group.get("rooms/:id/messages") { request, context in
            let caller = try context.requireCaller()
            let room = try Endpoints.pathID(context, "id", as: RoomID.self)
            let page = try Endpoints.page(request)
            let order = try Endpoints.order(request, default: .newestFirst)
            return try await endpoints.read(request) { view in
                try Self.requireMember(caller.user, of: room, in: view)
                return renderer.page(try view.roomMessages(in: room, order: order, page: page), renderer.roomMessage)
            }
        }
    }

    private func membership(_ request: Request, _ context: ChorusRequestContext, joined: Bool) async throws
        -> Response
    {
        let caller = try context.requireCaller()
        let room = try Endpoints.pathID(context, "id", as: RoomID.self)
        let command: Command =
            joined ? .joinRoom(user: caller.user, room: room) : .leaveRoom(user: caller.user, room: room)
        return try await Self.inPath(room) {
            try await endpoints.write(request, context: context, command: command) { view, _ in
                endpoints.renderer.room(try UserRoutes.require(view.room(room, viewer: caller.user), "room"))
            }
        }
    }

    /// Refuses a caller who is not in the room (404 when there is no such room): what `room:{id}` streams and message
    /// pages show is for members only.
    static func requireMember(_ user: UserID, of room: RoomID, in view: borrowing ReadView) throws {
        guard try view.room(room, viewer: user) != nil else { throw APIError.notFound("no room \(room)") }
        guard try view.isMember(user, of: room) else {
            throw APIError(DomainError(.forbidden, "only members of room \(room) can read it"))
        }
    }

    /// `?scope=joined` (the default: the caller's rooms) or `?scope=all` (every room, newest first).
    private static func scopeIsAll(_ request: Request) throws -> Bool {
        switch request.uri.queryParameters["scope"] {
        case nil, "joined": return false
        case "all": return true
        default: throw APIError.badRequest("scope must be joined or all")
        }
    }

    /// Runs a write on the room its path names: a room that is not there is 404.
    private static func inPath(_ room: RoomID, _ write: () async throws -> Response) async throws -> Response {
        do {
            return try await write()
        } catch let error as DomainError where error.code == .notFound {
            throw APIError.notFound("no room \(room)")
        }
    }
}
