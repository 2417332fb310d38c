import ChorusBackend
import ChorusDomain
import ChorusLog
import ChorusProjections
import HTTPTypes
import Hummingbird
import ServiceLifecycle

/// `GET /v1/live`: Server-Sent Events of what changes on the caller's screens. Each event is sent once the read
/// models have applied it, with its log position as the SSE id; a client that resumes after an id (`Last-Event-ID`
/// or `?after=`) gets every later event once, in log order, because the stream walks the log from that position.
/// One log event can concern several topics (a comment on the caller's post: `comment` and `notification`); those
/// events share their position's id and are written together. Which events concern which topics is the read models'
/// business (``ChorusProjections/LiveChange``); this is the stream.
struct LiveRoutes {
    let endpoints: Endpoints
    let heartbeat: Duration
    /// Walks the events once for every stream of this server, and wakes those they may concern.
    let hub: LiveHub
    /// The streams each user holds open, at most ``ServerConfiguration/liveStreamsPerUser``.
    let slots: LiveStreamSlots

    func add(to group: RouterGroup<ChorusRequestContext>) {
        group.get("live") { request, context in
            let caller = try context.requireCaller()
            let topics = try Self.topics(request)
            try requireReadable(topics, by: caller.user)
            let start = try await startPosition(request)
            // The token was checked before the start was fixed: a session that ended in between, at or before the
            // start, is an event this stream never walks.
            guard try endpoints.backend.isLive(caller.session, of: caller.user) else {
                throw APIError.unauthorized("the token is not valid, has expired, or was revoked")
            }
            let slot = slots.take(for: caller.user)
            var headers = HTTPFields()
            headers[.contentType] = "text/event-stream"
            headers[.cacheControl] = "no-store"
            let stream = LiveStream(
                endpoints: endpoints, caller: caller, topics: topics, heartbeat: heartbeat, hub: hub,
                slot: slot.stream)
            return Response(
                status: .ok, headers: headers,
                body: ResponseBody { writer in
                    // The slot is held until the stream ends, or until its answer is dropped unsent.
                    defer { withExtendedLifetime(slot) {} }
                    try await stream.run(from: start, into: &writer)
                    try await writer.finish(nil)
                })
        }
    }

    /// Refuses a topic the caller may not read: a room they are not in, a post hidden from them (its author blocked
    /// either way, or suspended: `404`; a private account they do not follow: `403`, as the post itself answers). A post that is not there (deleted: a client
    /// resuming after its `post_removed`) has nothing more to send, and is not refused.
    private func requireReadable(_ topics: Set<LiveTopic>, by viewer: UserID) throws {
        let rooms = topics.compactMap { topic -> RoomID? in if case .room(let room) = topic { room } else { nil } }
        let posts = topics.compactMap { topic -> PostID? in if case .post(let post) = topic { post } else { nil } }
        guard !rooms.isEmpty || !posts.isEmpty else { return }
        _ = try endpoints.backend.readModels.snapshot { view in
            for room in rooms { try RoomRoutes.requireMember(viewer, of: room, in: view) }
            for post in posts {
                try view.requireReadable(post, by: viewer)
                if try view.isHidden(post, from: viewer) { throw APIError.notFound("no post \(post)") }
            }
        }
    }

    /// Where the stream starts: after `Last-Event-ID` (or `?after=`), else after what the read models hold now. A
    /// position past the log's head was never handed out: resuming after it would wait, silent, for events that
    /// come long after the client's last one.
    private func startPosition(_ request: Request) async throws -> LogPosition {
        guard let text = request.headers[.lastEventID] ?? request.uri.queryParameters["after"].map(String.init) else {
            return endpoints.backend.projections.position
        }
        guard let after = UInt64(text.trimmingCharacters(in: .whitespaces)) else {
            throw APIError.badRequest("Last-Event-ID and after must be a log position (a whole number)")
        }
        let head = await endpoints.backend.head(reaching: LogPosition(after))
        guard after <= head.rawValue else {
            throw APIError.badRequest(
                "Last-Event-ID and after must be a position the server has handed out; the log ends at \(head)")
        }
        return LogPosition(after)
    }

    static func topics(_ request: Request) throws -> Set<LiveTopic> {
        guard let text = request.uri.queryParameters["topics"], !text.isEmpty else {
            throw APIError.badRequest("name the topics to listen to: ?topics=notifications,feed,…")
        }
        var topics = Set<LiveTopic>()
        for part in text.split(separator: ",") {
            guard let topic = LiveTopic(part.trimmingCharacters(in: .whitespaces)[...]) else {
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
    let topics: Set<LiveTopic>
    let heartbeat: Duration
    let hub: LiveHub
    /// Closed when the user opens more streams than they may hold: this one then ends.
    let slot: LiveStreamSlots.Stream

    func run(from start: LogPosition, into writer: inout any ResponseBodyWriter) async throws {
        let backend = endpoints.backend
        backend.metrics.liveStreamOpened()
        defer { backend.metrics.liveStreamClosed() }
        let followed = try backend.readModels.snapshot { view in
            try LiveInterest(viewer: caller.user, topics: topics, in: view)
        }
        var interest = followed.answer
        // A client resuming after a position these read models have not reached (another node's): the follows up to
        // it are never walked here.
        if start > followed.position { interest.forgetFollowees() }
        // A comment first, so that the client knows the stream is open.
        try await writer.write(ByteBuffer(string: ": open\n\n"))
        // On the server's graceful shutdown, every stream's wait ends (one handler for the stream, not one per wait).
        let (readModels, hub) = (backend.readModels, self.hub)
        do {
            try await withGracefulShutdownHandler {
                try await send(after: start, interest: interest, into: &writer)
            } onGracefulShutdown: {
                readModels.endShutdownWaits()
                hub.endShutdownWaits()
            }
        } catch is CancellationError {
            guard slot.isClosed else { return }
            try await writer.write(
                ByteBuffer(string: ": closed: this account opened more live streams than it may\n\n"))
        } catch is SessionEnded {
            // The stream ends with its session: a stolen token reads nothing more. The client, reconnecting, is told
            // 401.
            try await writer.write(ByteBuffer(string: ": session ended\n\n"))
        }
    }

    /// Thrown to end a stream whose session has ended.
    private struct SessionEnded: Error {}

    /// Throws ``SessionEnded`` unless the caller's session is still live.
    private func requireLiveSession() throws {
        guard try endpoints.backend.isLive(caller.session, of: caller.user) else { throw SessionEnded() }
    }

    /// Sends what concerns the stream after `start`, until cancelled: walks the events up to where the live hub has
    /// walked, then has the hub walk for it (``ChorusProjections/LiveHub``), which wakes it only for events that may
    /// concern it, or for a heartbeat; and walks itself again if it falls too far behind the hub.
    private func send(after start: LogPosition, interest: LiveInterest, into writer: inout any ResponseBodyWriter)
        async throws
    {
        var (sent, interest) = (start, interest)
        while true {
            var subscriber: UInt64?
            while subscriber == nil {
                switch try hub.subscribe(interest, through: sent, heartbeat: heartbeat) {
                case .subscribed(let id): subscriber = id
                case .behind(let walked):
                    try await send(from: &sent, through: walked, interest: &interest, into: &writer)
                }
            }
            guard let subscriber else { return }
            defer {
                _ = slot.waits(on: nil)
                hub.unsubscribe(subscriber)
            }
            // Closed before the hub had it to wake: nothing more for this stream.
            guard slot.waits(on: subscriber) else { throw CancellationError() }
            delivering: while true {
                switch try await hub.next(subscriber) {
                case .events(let events): try await write(events, into: &writer)
                case .heartbeat:
                    // A session also ends by expiring, which no event says.
                    try requireLiveSession()
                    try await writer.write(ByteBuffer(string: ": heartbeat\n\n"))
                case .fellBehind(let given, let learnt):
                    (sent, interest) = (given, learnt)
                    break delivering
                }
            }
        }
    }

    /// Sends what concerns the stream after `sent` up to `end`, walking the events itself, and learning from them.
    private func send(
        from sent: inout LogPosition, through end: LogPosition, interest: inout LiveInterest,
        into writer: inout any ResponseBodyWriter
    ) async throws {
        while sent < end {
            // Most events concern few of the streams: each stream copies out of the window only those that may
            // concern it.
            let (last, events) = try endpoints.backend.liveEvents.withEvents(
                from: sent.next, through: end, limit: 1_000
            ) { events in (events.last?.recorded.position, interest.walk(events)) }
            guard let last else { return }
            try await write(events, into: &writer)
            sent = last
        }
    }

    /// Renders `events` from one snapshot of the read models, which have applied them, and writes them in order.
    /// Most batches need no snapshot at all: they hold nothing that may concern the stream. Those after the end of
    /// the stream's session are not sent: ``SessionEnded`` is thrown instead.
    private func write(_ events: [DecodedEventWindow.Entry], into writer: inout any ResponseBodyWriter) async throws {
        if let end = events.firstIndex(where: endsSession) {
            try await write(Array(events[..<end]), into: &writer)
            throw SessionEnded()
        }
        guard !events.isEmpty else { return }
        let outgoing = try endpoints.backend.readModels.snapshot { view in
            try events.map { entry in (entry.recorded.position, try render(entry, in: view)) }
        }.answer
        // The events of one position go out in one write, so a client has all of them or none when it resumes
        // after their id.
        for (position, text) in outgoing where !text.isEmpty {
            try await writer.write(ByteBuffer(bytes: Self.frame(text, id: position)))
        }
    }

    /// The SSE events `entry` makes on the caller's topics, as `(event name, JSON)`, rendered as the REST answers
    /// are, from the snapshot being sent.
    private func render(_ entry: DecodedEventWindow.Entry, in view: borrowing ReadView) throws -> [(
        name: String, data: [UInt8]
    )] {
        let renderer = endpoints.renderer
        let changes = try view.liveChanges(of: entry.recorded, decoded: entry.event, for: caller.user, on: topics)
        return try changes.compactMap { change in
            switch change {
            case .post(let post, let position):
                var json = JSONWriter()
                guard
                    try view.withFeedPost(post, at: position, viewer: caller.user, { renderer.write($0, to: &json) })
                        != nil
                else { return nil }
                return ("post", json.bytes)
            case .taggedPost(let post):
                var json = JSONWriter()
                guard try view.withTaggedPost(post, viewer: caller.user, { renderer.write($0, to: &json) }) != nil
                else { return nil }
                return ("post", json.bytes)
            case .postRemoved(let post):
                return ("post_removed", JSONBody.encode(LiveRemovalJSON(id: post.rawValue, postId: nil)))
            case .comment(let comment):
                return ("comment", JSONBody.encode(renderer.comment(comment)))
            case .commentRemoved(let post, let comment):
                return (
                    "comment_removed", JSONBody.encode(LiveRemovalJSON(id: comment.rawValue, postId: post.rawValue))
                )
            case .likes(let post, let count):
                return ("like", JSONBody.encode(LiveCountJSON(postId: post.rawValue, name: "likes", count: count)))
            case .reposts(let post, let count):
                return ("repost", JSONBody.encode(LiveCountJSON(postId: post.rawValue, name: "reposts", count: count)))
            case .notification(let notification):
                return ("notification", JSONBody.encode(renderer.notification(notification)))
            case .message(let message):
                return ("message", JSONBody.encode(renderer.message(message)))
            case .conversation(let conversation):
                return ("conversation", JSONBody.encode(renderer.conversation(conversation)))
            case .read(let partner, let upTo):
                return (
                    "read", JSONBody.encode(ReadReceiptJSON(userId: partner.rawValue, partnerReadUpTo: upTo?.rawValue))
                )
            case .roomMessage(let message):
                return ("message", JSONBody.encode(renderer.roomMessage(message)))
            case .room(let room):
                guard let found = try view.room(room, viewer: caller.user) else { return nil }
                return ("room", JSONBody.encode(renderer.room(found)))
            case .profile(let user):
                // Hidden from the caller (a block either way, a suspension): nothing to send.
                guard let profile = try view.profile(user, viewer: caller.user) else { return nil }
                return ("profile", JSONBody.encode(renderer.profile(profile)))
            }
        }
    }

    /// Whether `entry` ends the stream's session (each way a session ends appends a ``SessionEnded`` for it).
    private func endsSession(_ entry: DecodedEventWindow.Entry) -> Bool {
        guard case .sessionEnded(let ended) = entry.event else { return false }
        return ended.session == caller.session
    }

    /// `id: …`, `event: …` and `data: …` of each event of one position.
    private static func frame(_ events: [(name: String, data: [UInt8])], id position: LogPosition) -> [UInt8] {
        var text: [UInt8] = []
        for event in events {
            text += Array("id: \(position.rawValue)\nevent: \(event.name)\ndata: ".utf8)
            text += event.data
            text += Array("\n\n".utf8)
        }
        return text
    }
}

/// The `like` and `repost` events of a `post:` topic: the post's like (`likes`) or repost (`reposts`) count after the
/// change.
struct LiveCountJSON: JSONWritable {
    let postId: String
    let name: StaticString
    let count: UInt64

    func write(to json: inout JSONWriter) {
        json.object {
            $0.field("postId", postId)
            $0.field(name, count)
        }
    }
}

/// `post_removed` (the post's id) and `comment_removed` (the comment's id, and its post's).
struct LiveRemovalJSON: JSONWritable {
    let id: String
    let postId: String?

    func write(to json: inout JSONWriter) {
        json.object {
            $0.field("id", id)
            if let postId { $0.field("postId", postId) }
        }
    }
}
