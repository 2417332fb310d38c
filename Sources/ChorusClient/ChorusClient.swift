import Foundation
import HTTPTypes
import OpenAPIRuntime

#if canImport(OpenAPIURLSession)
import OpenAPIURLSession
#elseif canImport(OpenAPIAsyncHTTPClient)
import OpenAPIAsyncHTTPClient
#endif

public typealias Post = Components.Schemas.Post
public typealias Profile = Components.Schemas.Profile
public typealias UserSummary = Components.Schemas.UserSummary
public typealias Comment = Components.Schemas.Comment
public typealias Notification = Components.Schemas.Notification
public typealias Message = Components.Schemas.Message
public typealias Conversation = Components.Schemas.Conversation
public typealias Room = Components.Schemas.Room
public typealias Media = Components.Schemas.Media
/// One of a post's images as a post names it: an uploaded image's id and its alt text.
public typealias PostImage = Components.Schemas.PostImage
/// Who may comment on a post besides its author: `everyone`, `following` (users the author follows), `mentioned`
/// or `nobody`.
public typealias ReplyPolicy = Components.Schemas.ReplyPolicy

/// A Chorus server, as an app talks to it: sign-up and login with a ``TokenStore``, every list as ``Pages``, live
/// streams as ``LiveEvents``, and read-your-writes without asking (see ``SessionMiddleware``). Anything not wrapped
/// here is on ``api``, the client generated from the server's `openapi.yaml`, which goes through the same session.
public final class ChorusClient: Sendable {
    /// The generated client, for the routes this type does not wrap.
    public let api: Client
    public let tokens: any TokenStore
    private let positions = PositionTracker()

    /// - Parameters:
    ///   - serverURL: where the server is, e.g. `https://chorus.example.com`.
    ///   - tokens: where the bearer token is kept; by default in memory.
    ///   - transport: by default URLSession on Apple platforms, AsyncHTTPClient on Linux.
    public init(serverURL: URL, tokens: any TokenStore = InMemoryTokenStore(), transport: (any ClientTransport)? = nil)
    {
        self.tokens = tokens
        api = Client(
            serverURL: serverURL, transport: transport ?? Self.defaultTransport(),
            middlewares: [SessionMiddleware(tokens: tokens, positions: positions)])
    }

    private static func defaultTransport() -> any ClientTransport {
        #if canImport(OpenAPIURLSession)
        URLSessionTransport()
        #else
        AsyncHTTPClientTransport()
        #endif
    }

    /// The highest log position an answer carried: every later read waits until the server shows at least this.
    public var position: UInt64? { positions.highest }

    // MARK: Account

    /// Signs up and signs in: the token goes to the ``TokenStore``.
    @discardableResult
    public func signUp(
        email: String, password: String, name: String, major: String? = nil, bio: String? = nil, handle: String? = nil
    ) async throws -> Profile {
        let answer = try await unwrapping {
            try await api.register(
                body: .json(.init(bio: bio, email: email, handle: handle, major: major, name: name, password: password))
            ).created.body.json
        }
        await tokens.setToken(answer.token)
        return answer.user
    }

    /// Signs in: the token goes to the ``TokenStore``.
    @discardableResult
    public func logIn(email: String, password: String) async throws -> Profile {
        let answer = try await unwrapping {
            try await api.login(body: .json(.init(email: email, password: password))).ok.body.json
        }
        await tokens.setToken(answer.token)
        return answer.user
    }

    /// Signs out: the server revokes the token, and the ``TokenStore`` forgets it. `device`, this phone's id from
    /// ``registerDevice(token:service:locale:)-(Data,_,_)``, stops getting pushes too.
    public func logOut(forgettingDevice device: String? = nil) async throws {
        _ = try await unwrapping { try await api.logout(body: device.map { .json(.init(deviceId: $0)) }) }
        await tokens.setToken(nil)
    }

    /// The signed-in user's profile, with their e-mail and unread counts.
    public func me() async throws -> Profile {
        try await unwrapping { try await api.getMe().ok.body.json }
    }

    /// Changes the fields given; `profileImage` is a media id from ``uploadImage(_:contentType:)``; a new `handle`
    /// frees the old one at once. `isPrivate: true` makes following the account a request it answers
    /// (``followRequests()``); `false` accepts every pending request.
    @discardableResult
    public func editProfile(
        name: String? = nil, major: String? = nil, bio: String? = nil, profileImage: String? = nil,
        handle: String? = nil, isPrivate: Bool? = nil
    ) async throws -> Profile {
        try await unwrapping {
            try await api.editMe(
                body: .json(
                    .init(
                        bio: bio, handle: handle, major: major, name: name, _private: isPrivate,
                        profileImage: profileImage))
            ).ok.body.json
        }
    }

    // MARK: Users

    public func user(_ id: String) async throws -> Profile {
        try await unwrapping { try await api.getUser(path: .init(id: id)).ok.body.json }
    }

    /// The account whose handle this is now (`@` left out, any case), as a tapped `@mention` opens it.
    public func user(byHandle handle: String) async throws -> Profile {
        let handle = handle.hasPrefix("@") ? String(handle.dropFirst()) : handle
        return try await unwrapping { try await api.getUserByHandle(path: .init(handle: handle)).ok.body.json }
    }

    /// Users by handle, name or major (Korean initials too); with no query, everyone, most followed first.
    public func searchUsers(_ query: String = "") -> Pages<UserSummary> {
        Pages { cursor in
            let page = try await unwrapping {
                try await self.api.searchUsers(query: .init(q: query, cursor: cursor)).ok.body.json
            }
            return (page.items, page.nextCursor)
        }
    }

    /// Follows the user, or asks to when their account is private: then `requested` is true until they answer.
    @discardableResult
    public func follow(_ user: String) async throws -> Components.Schemas.FollowState {
        try await unwrapping { try await api.follow(path: .init(id: user)).ok.body.json }
    }

    /// Unfollows the user, or withdraws the request to follow them.
    @discardableResult
    public func unfollow(_ user: String) async throws -> Components.Schemas.FollowState {
        try await unwrapping { try await api.unfollow(path: .init(id: user)).ok.body.json }
    }

    /// Who asked to follow the caller's private account and awaits the answer, most recent first.
    public func followRequests() -> Pages<UserSummary> {
        Pages { cursor in
            let page = try await unwrapping {
                try await self.api.myFollowRequests(query: .init(cursor: cursor)).ok.body.json
            }
            return (page.items, page.nextCursor)
        }
    }

    /// Accepts the user's pending request to follow the caller: they follow from now on.
    public func acceptFollowRequest(from user: String) async throws {
        _ = try await unwrapping { try await api.acceptFollowRequest(path: .init(userId: user)).noContent }
    }

    /// Declines the user's pending request to follow the caller.
    public func declineFollowRequest(from user: String) async throws {
        _ = try await unwrapping { try await api.declineFollowRequest(path: .init(userId: user)).noContent }
    }

    public func followers(of user: String) -> Pages<UserSummary> {
        Pages { cursor in
            let page = try await unwrapping {
                try await self.api.getFollowers(path: .init(id: user), query: .init(cursor: cursor)).ok.body.json
            }
            return (page.items, page.nextCursor)
        }
    }

    // MARK: Posts

    /// Uploads an image (JPEG, PNG, GIF or WebP, at most 10 MiB); its id goes into a post or a profile.
    /// Uploads a photo; the server strips its metadata and answers its size, BlurHash and `small`/`large` variants.
    public func uploadImage(_ bytes: Data, contentType: ImageType) async throws -> Media {
        let body = HTTPBody(bytes)
        let input: Operations.UploadMedia.Input.Body =
            switch contentType {
            case .jpeg: .jpeg(body)
            case .png: .png(body)
            case .gif: .imageGif(body)
            case .webp: .imageWebp(body)
            case .heic: .imageHeic(body)
            case .heif: .imageHeif(body)
            case .avif: .imageAvif(body)
            }
        return try await unwrapping { try await api.uploadMedia(body: input).created.body.json }
    }

    /// What the bytes of an upload are: HEIC is what iPhones shoot.
    public enum ImageType: Sendable { case jpeg, png, gif, webp, heic, heif, avif }

    /// Posts text, up to four images (uploaded with ``uploadImage(_:contentType:)``, each with its alt text), or
    /// both; with `quoting`, a quote of that post. `image` is one image without alt text, as version 1 posted it.
    /// `replies` says who may comment besides the author (everyone when nil).
    @discardableResult
    public func post(
        text: String? = nil, caption: String? = nil, media: [PostImage]? = nil, image: String? = nil,
        quoting: String? = nil, replies: ReplyPolicy? = nil
    ) async throws -> Post {
        try await unwrapping {
            try await api.createPost(
                body: .json(
                    .init(
                        caption: caption, image: image, media: media, replies: replies, repostOf: quoting, text: text))
            ).created.body.json
        }
    }

    /// Changes one's own post: its caption, its text, its images' alt texts (`media` names the post's images, the
    /// same in the same order), or who may comment; nil leaves a field as it is.
    @discardableResult
    public func editPost(
        _ id: String, caption: String? = nil, text: String? = nil, media: [PostImage]? = nil,
        replies: ReplyPolicy? = nil
    ) async throws -> Post {
        try await unwrapping {
            try await api.editPost(
                path: .init(id: id), body: .json(.init(caption: caption, media: media, replies: replies, text: text))
            ).ok.body.json
        }
    }

    public func post(_ id: String) async throws -> Post {
        try await unwrapping { try await api.getPost(path: .init(id: id)).ok.body.json }
    }

    public func deletePost(_ id: String) async throws {
        _ = try await unwrapping { try await api.deletePost(path: .init(id: id)) }
    }

    @discardableResult
    public func like(_ post: String) async throws -> Components.Schemas.LikeState {
        try await unwrapping { try await api.like(path: .init(id: post)).ok.body.json }
    }

    @discardableResult
    public func unlike(_ post: String) async throws -> Components.Schemas.LikeState {
        try await unwrapping { try await api.unlike(path: .init(id: post)).ok.body.json }
    }

    /// A plain repost (a retweet): the post shows in the caller's followers' feeds with `repostedBy`.
    @discardableResult
    public func repost(_ post: String) async throws -> Components.Schemas.RepostState {
        try await unwrapping { try await api.repost(path: .init(id: post)).ok.body.json }
    }

    @discardableResult
    public func unrepost(_ post: String) async throws -> Components.Schemas.RepostState {
        try await unwrapping { try await api.unrepost(path: .init(id: post)).ok.body.json }
    }

    @discardableResult
    public func comment(on post: String, _ text: String) async throws -> Comment {
        try await unwrapping {
            try await api.addComment(path: .init(id: post), body: .json(.init(text: text))).created.body.json
        }
    }

    /// A post's comments, oldest first.
    public func comments(on post: String) -> Pages<Comment> {
        Pages { cursor in
            let page = try await unwrapping {
                try await self.api.getComments(path: .init(id: post), query: .init(cursor: cursor)).ok.body.json
            }
            return (page.items, page.nextCursor)
        }
    }

    // MARK: Feeds and tabs

    /// Every post, newest first; with `mediaOnly`, only those with an image (the Instagram grid).
    public func homeFeed(mediaOnly: Bool = false) -> Pages<Post> {
        Pages { cursor in
            let page = try await unwrapping {
                try await self.api.homeFeed(query: .init(cursor: cursor, media: mediaOnly)).ok.body.json
            }
            return (page.items, page.nextCursor)
        }
    }

    /// Posts and reposts of the users the caller follows, and the caller's own, newest first.
    public func followingFeed(mediaOnly: Bool = false) -> Pages<Post> {
        Pages { cursor in
            let page = try await unwrapping {
                try await self.api.followingFeed(query: .init(cursor: cursor, media: mediaOnly)).ok.body.json
            }
            return (page.items, page.nextCursor)
        }
    }

    /// A profile's posts tab: everything, original posts, reposts, or the media grid.
    public func posts(of user: String, kind: Operations.GetUserPosts.Input.Query.KindPayload = .all) -> Pages<Post> {
        Pages { cursor in
            let page = try await unwrapping {
                try await self.api.getUserPosts(path: .init(id: user), query: .init(cursor: cursor, kind: kind)).ok
                    .body.json
            }
            return (page.items, page.nextCursor)
        }
    }

    /// The posts `user` liked, most recently liked first.
    public func likes(of user: String) -> Pages<Post> {
        Pages { cursor in
            let page = try await unwrapping {
                try await self.api.getUserLikes(path: .init(id: user), query: .init(cursor: cursor)).ok.body.json
            }
            return (page.items, page.nextCursor)
        }
    }

    // MARK: Notifications

    public func notifications() -> Pages<Notification> {
        Pages { cursor in
            let page = try await unwrapping {
                try await self.api.notifications(query: .init(cursor: cursor)).ok.body.json
            }
            return (page.items, page.nextCursor)
        }
    }

    /// Marks notifications read up to `notification` (an id); answers how many are left unread.
    @discardableResult
    public func markNotificationsRead(upTo notification: String) async throws -> Int {
        try await unwrapping {
            try await api.readNotifications(body: .json(.init(upTo: notification))).ok.body.json.unreadNotifications
        }
    }

    // MARK: Messages

    @discardableResult
    public func send(_ text: String, to user: String) async throws -> Message {
        try await unwrapping { try await api.sendMessage(body: .json(.init(text: text, to: user))).created.body.json }
    }

    /// The recent-messages list: one row per partner, latest first, with unread counts and read receipts.
    public func conversations() -> Pages<Conversation> {
        Pages { cursor in
            let page = try await unwrapping {
                try await self.api.conversations(query: .init(cursor: cursor)).ok.body.json
            }
            return (page.items, page.nextCursor)
        }
    }

    /// The messages with `user`, oldest first.
    public func messages(with user: String) -> Pages<Message> {
        Pages { cursor in
            let page = try await unwrapping {
                try await self.api.messages(path: .init(userId: user), query: .init(order: .asc, cursor: cursor)).ok
                    .body.json
            }
            return (page.items, page.nextCursor)
        }
    }

    /// Marks the conversation with `user` read; answers how many conversations are left unread.
    @discardableResult
    public func markConversationRead(with user: String) async throws -> Int {
        try await unwrapping {
            try await api.readConversation(path: .init(userId: user)).ok.body.json.unreadConversations
        }
    }

    // MARK: Rooms

    public func createRoom(named name: String) async throws -> Room {
        try await unwrapping { try await api.createRoom(body: .json(.init(name: name))).created.body.json }
    }

    /// The caller's rooms, or with `all`, every room.
    public func rooms(all: Bool = false) -> Pages<Room> {
        Pages { cursor in
            let page = try await unwrapping {
                try await self.api.rooms(query: .init(scope: all ? .all : .joined, cursor: cursor)).ok.body.json
            }
            return (page.items, page.nextCursor)
        }
    }

    @discardableResult
    public func join(room: String) async throws -> Room {
        try await unwrapping { try await api.joinRoom(path: .init(id: room)).ok.body.json }
    }

    @discardableResult
    public func leave(room: String) async throws -> Room {
        try await unwrapping { try await api.leaveRoom(path: .init(id: room)).ok.body.json }
    }

    @discardableResult
    public func send(_ text: String, toRoom room: String) async throws -> Message {
        try await unwrapping {
            try await api.sendRoomMessage(path: .init(id: room), body: .json(.init(text: text))).created.body.json
        }
    }

    /// A room's messages, oldest first (members only).
    public func messages(inRoom room: String) -> Pages<Message> {
        Pages { cursor in
            let page = try await unwrapping {
                try await self.api.roomMessages(path: .init(id: room), query: .init(order: .asc, cursor: cursor)).ok
                    .body.json
            }
            return (page.items, page.nextCursor)
        }
    }

    // MARK: Live

    /// What happens on `topics` from `position` on (by default, the last position this client read or wrote), as it
    /// happens: the snapshot listener of Chorus. The stream reconnects by itself after a network failure or a server
    /// restart, resuming after the last event it delivered: no event comes twice, none is skipped.
    public func live(_ topics: [LiveTopic], after position: UInt64? = nil) async throws -> LiveEvents {
        var start = position ?? positions.highest
        if start == nil {
            // A client that has read nothing yet starts where the server is now.
            _ = try await me()
            start = positions.highest
        }
        let names = topics.map(\.name).joined(separator: ",")
        let api = self.api
        return LiveEvents(start: start ?? 0) { after in
            try await unwrapping {
                try await api.live(
                    query: .init(topics: names), headers: .init(lastEventID: String(after))
                ).ok.body.textEventStream
            }
        }
    }
}
