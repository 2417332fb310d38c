import Foundation
import OpenAPIRuntime

/// What a live stream listens to.
public enum LiveTopic: Sendable, Hashable {
    /// The caller's notifications.
    case notifications
    /// The caller's recent-messages list, and read receipts.
    case conversations
    /// The caller's messages with one user.
    case conversation(withUser: String)
    /// One post's comments, like and repost counts.
    case post(String)
    /// New posts and reposts of the caller's Following feed, and posts leaving it.
    case feed
    /// One user's profile edits.
    case profile(String)
    /// One room's messages and members (members only).
    case room(String)
    /// New posts holding a hashtag (`#` optional), sent as ``LiveEvent/post(_:)``.
    case hashtag(String)

    var name: String {
        switch self {
        case .notifications: "notifications"
        case .conversations: "conversations"
        case .conversation(let user): "conversation:\(user)"
        case .post(let post): "post:\(post)"
        case .feed: "feed"
        case .profile(let user): "profile:\(user)"
        case .room(let room): "room:\(room)"
        case .hashtag(let tag): "hashtag:\(tag.hasPrefix("#") ? String(tag.dropFirst()) : tag)"
        }
    }
}

/// One change a live stream delivers, typed.
public enum LiveEvent: Sendable, Hashable {
    /// A post new in the Following feed (with `repostedBy` when a followed user reposted it).
    case post(Post)
    /// A post that left the Following feed.
    case postRemoved(postID: String)
    case comment(Comment)
    case commentRemoved(commentID: String, postID: String)
    case likes(postID: String, count: Int)
    case reposts(postID: String, count: Int)
    case notification(Notification)
    /// A direct message, or a room's (`roomId` set).
    case message(Message)
    /// A conversation that moved to the top of the recent-messages list.
    case conversation(Conversation)
    /// The partner read the conversation: the newest of the caller's messages they have read.
    case read(userID: String, partnerReadUpTo: String?)
    case profile(Profile)
    case room(Room)
    /// An event this version of the SDK does not know; its name and JSON.
    case other(name: String, data: String)

    init(name: String, data: String) throws {
        let json = Data(data.utf8)
        let decoder = JSONDecoder()
        func decode<T: Decodable>(_ type: T.Type = T.self) throws -> T { try decoder.decode(type, from: json) }
        struct Removal: Decodable {
            let id: String
            let postId: String?
        }
        struct Count: Decodable {
            let postId: String
            let likes: Int?
            let reposts: Int?
        }
        struct Receipt: Decodable {
            let userId: String
            let partnerReadUpTo: String?
        }
        switch name {
        case "post": self = .post(try decode())
        case "post_removed": self = .postRemoved(postID: try decode(Removal.self).id)
        case "comment": self = .comment(try decode())
        case "comment_removed":
            let removal = try decode(Removal.self)
            self = .commentRemoved(commentID: removal.id, postID: removal.postId ?? "")
        case "like":
            let count = try decode(Count.self)
            self = .likes(postID: count.postId, count: count.likes ?? 0)
        case "repost":
            let count = try decode(Count.self)
            self = .reposts(postID: count.postId, count: count.reposts ?? 0)
        case "notification": self = .notification(try decode())
        case "message": self = .message(try decode())
        case "conversation": self = .conversation(try decode())
        case "read":
            let receipt = try decode(Receipt.self)
            self = .read(userID: receipt.userId, partnerReadUpTo: receipt.partnerReadUpTo)
        case "profile": self = .profile(try decode())
        case "room": self = .room(try decode())
        default: self = .other(name: name, data: data)
        }
    }
}

/// A live event and the log position it came from (its SSE id): a screen that reads over REST later can ask for this
/// position to see it.
public struct LiveUpdate: Sendable, Hashable {
    public let position: UInt64
    public let event: LiveEvent
}

/// A live stream as a sequence of typed events that outlives its connections: when one drops (the network, a server
/// restart), it connects again after a short wait and resumes after the last event delivered, with `Last-Event-ID`.
/// Events of one position share it; to be sure none of a position whose events came only in part is lost, it resumes
/// one position back and skips what it delivered of that one. It ends when the task iterating it is cancelled, or
/// throws when the server refuses the stream (a 4xx: signed out, not a member).
public struct LiveEvents: AsyncSequence, Sendable {
    public typealias Element = LiveUpdate

    /// Opens a stream that starts after a position: its SSE body.
    typealias Open = @Sendable (_ after: UInt64) async throws -> HTTPBody

    let start: UInt64
    let open: Open
    /// The first wait before connecting again; it doubles up to ``maximumDelay``, and starts over once connected.
    var firstDelay: Duration = .milliseconds(100)
    var maximumDelay: Duration = .seconds(5)

    init(start: UInt64, open: @escaping Open) {
        self.start = start
        self.open = open
    }

    public func makeAsyncIterator() -> AsyncThrowingStream<LiveUpdate, any Error>.Iterator {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: LiveUpdate.self)
        let task = Task { [self] in
            do {
                try await run(into: continuation)
                continuation.finish()
            } catch {
                continuation.finish(throwing: error is CancellationError ? nil : error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream.makeAsyncIterator()
    }

    private func run(into continuation: AsyncThrowingStream<LiveUpdate, any Error>.Continuation) async throws {
        var delivered = Delivered(position: start)
        var delay = firstDelay
        while !Task.isCancelled {
            do {
                let body = try await open(delivered.resumePoint)
                delay = firstDelay
                var arriving = Delivered(position: 0)
                for try await event in body.asDecodedServerSentEvents() {
                    // Comments (heartbeats) have no event name.
                    guard let name = event.event, let id = event.id.flatMap(UInt64.init) else { continue }
                    if id != arriving.position { arriving = Delivered(position: id) }
                    let occurrence = arriving.count(name)
                    arriving.add(name)
                    guard delivered.isNew(name, occurrence: occurrence, at: id) else { continue }
                    let update = LiveUpdate(position: id, event: try LiveEvent(name: name, data: event.data ?? ""))
                    delivered.deliver(name, at: id)
                    continuation.yield(update)
                }
            } catch let refusal as ChorusError where (400..<500).contains(refusal.status) && refusal.status != 429 {
                throw refusal
            } catch is CancellationError {
                return
            } catch {
                // The connection failed or dropped: connect again.
            }
            try await Task.sleep(for: delay)
            delay = Swift.min(delay * 2, maximumDelay)
        }
    }
}

/// The events delivered at the newest position: how many of each name.
struct Delivered {
    private(set) var position: UInt64
    private var counts: [String: Int] = [:]

    init(position: UInt64) { self.position = position }

    /// Where a new connection starts: one position back while some of this position's events were delivered.
    var resumePoint: UInt64 { counts.isEmpty || position == 0 ? position : position - 1 }

    func count(_ name: String) -> Int { counts[name, default: 0] }

    mutating func add(_ name: String) { counts[name, default: 0] += 1 }

    /// Whether the `occurrence`-th event named `name` at `id` was not delivered yet.
    func isNew(_ name: String, occurrence: Int, at id: UInt64) -> Bool {
        id > position || (id == position && occurrence >= count(name))
    }

    mutating func deliver(_ name: String, at id: UInt64) {
        if id > position { self = Delivered(position: id) }
        add(name)
    }
}
