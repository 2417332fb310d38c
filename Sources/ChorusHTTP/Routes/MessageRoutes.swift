import ChorusDomain
import ChorusProjections
import Hummingbird

/// Direct messages and the recent-messages list. A conversation is readable only by its two users: the caller is
/// always one of them.
struct MessageRoutes {
    let endpoints: Endpoints

    struct NewMessage: Decodable {
        let to: String
        let text: String
    }

    func add(to group: RouterGroup<ChorusRequestContext>) {
        let renderer = endpoints.renderer
        group.post("messages") { request, context in
            let caller = try context.requireCaller()
            let (body, bytes) = try await JSONBody.decode(NewMessage.self, from: request)
            guard let to = UserID(body.to) else { throw APIError(DomainError(.unknownUser, "no user \(body.to)")) }
            try limitMessage(from: caller.user, to: to)
            let command = Command.sendMessage(from: caller.user, to: to, text: body.text)
            return try await endpoints.write(
                request, context: context, requestBody: bytes, status: .created, command: command
            ) { view, result in
                let recorded = try endpoints.event(at: result.position)
                guard case .messageSent(let message) = recorded.event else {
                    throw APIError.unavailable("no message at position \(result.position)")
                }
                return MessageJSON(
                    id: message.message.rawValue,
                    from: renderer.user(try UserRoutes.require(view.userSummary(caller.user), "user")),
                    to: renderer.user(try UserRoutes.require(view.userSummary(to), "user")), text: message.text,
                    createdAt: recorded.time)
            }
        }
        endpoints.getPage(
            group, "conversations", { view, caller, page in try view.conversations(of: caller.user, page: page) },
            render: renderer.conversation)
        group.post("conversations/:userId/read") { request, context in
            let caller = try context.requireCaller()
            let partner = try Endpoints.pathID(context, "userId", as: UserID.self)
            let command = Command.readConversation(reader: caller.user, partner: partner)
            do {
                return try await endpoints.write(request, context: context, command: command) { view, _ in
                    UnreadJSON(name: "unreadConversations", count: try view.unreadConversations(of: caller.user))
                }
            } catch let error as DomainError where error.code == .unknownUser {
                throw APIError.notFound("no user \(partner)")
            }
        }
        group.get("conversations/:userId/messages") { request, context in
            let caller = try context.requireCaller()
            let partner = try Endpoints.pathID(context, "userId", as: UserID.self)
            let page = try Endpoints.page(request)
            let order = try Endpoints.order(request, default: .newestFirst)
            return try await endpoints.read(request) { view in
                _ = try UserRoutes.require(view.userSummary(partner), "user")
                return renderer.page(
                    try view.messages(between: caller.user, and: partner, order: order, page: page), renderer.message)
            }
        }
    }

    /// Holds `from` to the tighter limit of messages to strangers when `to` does not know them
    /// (``ChorusProjections/ReadView/knows(_:_:)``), then to their limit of messages: what a spammer sends, and what
    /// first contact needs. A message refused as a stranger's spends nothing of the other limit.
    private func limitMessage(from: UserID, to: UserID) throws {
        let limiters = endpoints.limiters
        if let strangers = limiters.messagesToStrangers,
            try !endpoints.backend.readModels.snapshot({ view in try view.knows(to, from) }).answer
        {
            try Limiters.spend(strangers, from.rawValue, "messages to people who do not follow this account")
        }
        try Limiters.spend(limiters.messagesPerUser, from.rawValue, "messages from this account")
    }
}
