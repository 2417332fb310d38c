import ChorusDomain
import ChorusLog
import ChorusProjections
import Hummingbird
import HTTPTypes
import ServiceLifecycle

/// `GET /v1/live`: Server-Sent Events of what changes on the caller's screens. Each event is sent once the read
/// models have applied it, with its log position as the SSE id; a client that resumes after an id (`Last-Event-ID`
/// or `?after=`) gets every later event once, in log order, because the stream walks the log from that position.
/// One log event can concern several topics (a comment on the caller's post: `comment` and `notification`); those
/// events share their position's id and are written together.
struct LiveRoutes {
    let endpoints: Endpoints
    let heartbeat: Duration

    /// What a client may listen to; `conversation:` and `post:` name a user or a post.
    enum Topic: Hashable, Sendable {
        case notifications
        case conversations
        case conversation(UserID)
        case post(PostID)
        case feed

        init?(_ text: Substring) {
            switch text {
            case "notifications": self = .notifications
            case "conversations": self = .conversations
            case "feed": self = .feed
            default:
                let parts = text.split(separator: ":", maxSplits: 1)
                guard parts.count == 2 else { return nil }
                if parts[0] == "conversation", let user = UserID(String(parts[1])) {
                    self = .conversation(user)
                } else if parts[0] == "post", let post = PostID(String(parts[1])) {
                    self = .post(post)
                } else {
                    return nil
                }
            }
        }
    }

    func add(to group: RouterGroup<ChorusRequestContext>) {
        group.get("live") { request, context in
            let caller = try context.requireCaller()
            let topics = try Self.topics(request)
            var start = endpoints.backend.projections.position
            if let text = request.headers[.lastEventID] ?? request.uri.queryParameters["after"].map(String.init) {
                guard let after = UInt64(text.trimmingCharacters(in: .whitespaces)) else {
                    throw APIError.badRequest("Last-Event-ID and after must be a log position (a whole number)")
                }
                start = LogPosition(after)
            }
            var headers = HTTPFields()
            headers[.contentType] = "text/event-stream"
            headers[.cacheControl] = "no-store"
            let stream = LiveStream(endpoints: endpoints, caller: caller, topics: topics, heartbeat: heartbeat)
            let from = start
            return Response(status: .ok, headers: headers, body: ResponseBody { writer in
                try await stream.run(from: from, into: &writer)
                try await writer.finish(nil)
            })
        }
    }

    static func topics(_ request: Request) throws -> Set<Topic> {
        guard let text = request.uri.queryParameters["topics"], !text.isEmpty else {
            throw APIError.badRequest("name the topics to listen to: ?topics=notifications,feed,…")
        }
        var topics = Set<Topic>()
        for part in text.split(separator: ",") {
            guard let topic = Topic(part.trimmingCharacters(in: .whitespaces)[...]) else {
                throw APIError.badRequest("unknown topic \(part)")
            }
            topics.insert(topic)
        }
        return topics
    }
}

/// One client's stream: walks the log behind the read models and sends what concerns its topics.
struct LiveStream: Sendable {
    let endpoints: Endpoints
    let caller: Caller
    let topics: Set<LiveRoutes.Topic>
    let heartbeat: Duration

    /// One event to send.
    struct Outgoing {
        let name: String
        let data: [UInt8]
    }

    func run(from start: LogPosition, into writer: inout any ResponseBodyWriter) async throws {
        let metrics = endpoints.backend.metrics
        metrics.liveStreamOpened()
        defer { metrics.liveStreamClosed() }
        var sent = start
        // A comment first, so that the client knows the stream is open.
        try await writer.write(ByteBuffer(string: ": open\n\n"))
        do {
            while !Task.isCancelled {
                guard let reached = try await nextPosition(after: sent) else {
                    try await writer.write(ByteBuffer(string: ": heartbeat\n\n"))
                    continue
                }
                while sent < reached {
                    let events = try endpoints.backend.log.read(
                        from: sent.next, limit: min(1_000, Int(reached.rawValue - sent.rawValue)))
                    guard let last = events.last else { break }
                    let outgoing = try endpoints.backend.readModels.snapshot { view in
                        try events.map { recorded in (recorded.position, try render(recorded, in: view)) }
                    }.answer
                    // The events of one position go out in one write, so a client has all of them or none when it
                    // resumes after their id.
                    for (position, group) in outgoing where !group.isEmpty {
                        var text = ""
                        for event in group {
                            text += "id: \(position.rawValue)\nevent: \(event.name)\ndata: "
                            text += String(decoding: event.data, as: UTF8.self)
                            text += "\n\n"
                        }
                        try await writer.write(ByteBuffer(string: text))
                    }
                    sent = last.position
                }
            }
        } catch is CancellationError {
            return
        }
    }

    /// The position the read models reach next, or nil when a heartbeat is due first. Ends on graceful shutdown.
    private func nextPosition(after position: LogPosition) async throws -> LogPosition? {
        let readModels = endpoints.backend.readModels
        if readModels.current.position > position { return readModels.current.position }
        let heartbeatDue = ContinuousClock.now + heartbeat
        return try await cancelWhenGracefulShutdown {
            try await readModels.waitForPosition(after: position, until: heartbeatDue)
        }
    }

    /// The events this log event makes on the caller's topics (one per topic it concerns), rendered as the REST
    /// answers are, from the snapshot being sent.
    private func render(_ recorded: RecordedEvent, in view: ReadView) throws -> [Outgoing] {
        let renderer = endpoints.renderer
        let me = caller.user
        var outgoing: [Outgoing] = []
        func like(_ post: PostID) throws {
            guard topics.contains(.post(post)), let found = try view.post(post, viewer: me) else { return }
            outgoing.append(.init(name: "like", data: JSONBody.encode(LiveLikeJSON(postId: post.rawValue, likes: found.likes))))
        }
        switch try DomainEvent(decoding: recorded) {
        case .postCreated(let event):
            if topics.contains(.feed), try event.author == me || view.follows(me, event.author),
                let post = try view.storedPost(event.post, viewer: me)
            {
                outgoing.append(.init(name: "post", data: JSONBody.encode(renderer.post(post))))
            }
        case .commentAdded(let event):
            if topics.contains(.post(event.post)), let author = try view.userSummary(event.author) {
                let comment = CommentJSON(
                    id: event.comment.rawValue, postId: event.post.rawValue, author: renderer.user(author),
                    text: event.text, createdAt: recorded.recordedAt)
                outgoing.append(.init(name: "comment", data: JSONBody.encode(comment)))
            }
            try notification(at: recorded.position, in: view).map { outgoing.append($0) }
        case .liked(let event):
            try like(event.post)
            try notification(at: recorded.position, in: view).map { outgoing.append($0) }
        case .unliked(let event):
            try like(event.post)
        case .followed:
            try notification(at: recorded.position, in: view).map { outgoing.append($0) }
        case .messageSent(let event) where event.from == me || event.to == me:
            let partner = event.from == me ? event.to : event.from
            guard let from = try view.userSummary(event.from), let to = try view.userSummary(event.to) else { break }
            let message = MessageJSON(
                id: event.message.rawValue, from: renderer.user(from), to: renderer.user(to), text: event.text,
                createdAt: recorded.recordedAt)
            if topics.contains(.conversation(partner)) {
                outgoing.append(.init(name: "message", data: JSONBody.encode(message)))
            }
            if topics.contains(.conversations) {
                let row = ConversationJSON(partner: renderer.user(event.from == me ? to : from), lastMessage: message)
                outgoing.append(.init(name: "conversation", data: JSONBody.encode(row)))
            }
        default:
            break
        }
        return outgoing
    }

    /// The caller's notification made at `position`, if the caller listens to notifications and it still stands.
    private func notification(at position: LogPosition, in view: ReadView) throws -> Outgoing? {
        guard topics.contains(.notifications) else { return nil }
        let page = try view.notifications(
            of: caller.user, page: PageRequest(limit: 1, cursor: PageCursor(position: position.next)))
        guard let found = page.items.first, found.id == PageCursor(position: position).description else { return nil }
        return .init(name: "notification", data: JSONBody.encode(endpoints.renderer.notification(found)))
    }
}

/// The `like` event of a `post:` topic: the post's like count after the change.
struct LiveLikeJSON: JSONWritable {
    let postId: String
    let likes: UInt64

    func write(to json: inout JSONWriter) {
        json.object {
            $0.field("postId", postId)
            $0.field("likes", likes)
        }
    }
}
