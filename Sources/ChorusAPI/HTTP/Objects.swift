import ChorusDomain
import ChorusLog
import ChorusProjections
import Foundation

/// API.md's objects, as JSON. Made from the read models' answers; images become URLs here.
struct ObjectRenderer: Sendable {
    /// Where media is served from: `<base>/v1/media/<id>`.
    let publicBaseURL: String

    func imageURL(_ media: MediaID?) -> String? { media.map { "\(publicBaseURL)/v1/media/\($0.rawValue)" } }

    func user(_ user: UserSummary) -> UserJSON {
        UserJSON(id: user.id.rawValue, name: user.name, major: user.major, profileImage: Nullable(imageURL(user.profileImage)))
    }

    func profile(_ profile: Profile) -> ProfileJSON {
        ProfileJSON(
            id: profile.summary.id.rawValue, name: profile.summary.name, major: profile.summary.major,
            bio: profile.bio, profileImage: Nullable(imageURL(profile.summary.profileImage)), followers: profile.followers,
            following: profile.following, posts: profile.posts, isFollowed: profile.isFollowed, isMe: profile.isMe,
            email: profile.email)
    }

    func post(_ post: Post) -> PostJSON {
        PostJSON(
            id: post.id.rawValue, author: user(post.author), caption: post.caption, text: post.text,
            image: Nullable(imageURL(post.image)), repostOf: Nullable(post.repostOf.map { .init(self.post($0)) }),
            createdAt: Timestamp.format(post.createdAt), likes: post.likes, comments: post.comments,
            hasLiked: post.hasLiked)
    }

    func comment(_ comment: Comment) -> CommentJSON {
        CommentJSON(
            id: comment.id.rawValue, postId: comment.postID.rawValue, author: user(comment.author), text: comment.text,
            createdAt: Timestamp.format(comment.createdAt))
    }

    func notification(_ notification: ChorusProjections.Notification) -> NotificationJSON {
        NotificationJSON(
            id: notification.id, type: notification.kind.rawValue, actor: user(notification.actor),
            actorIsFollowed: notification.actorIsFollowed,
            post: Nullable(notification.post.map { .init(id: $0.id.rawValue, image: Nullable(imageURL($0.image))) }),
            comment: Nullable(notification.comment.map(comment)), createdAt: Timestamp.format(notification.createdAt))
    }

    func message(_ message: Message) -> MessageJSON {
        MessageJSON(
            id: message.id.rawValue, from: user(message.from), to: user(message.to), text: message.text,
            createdAt: Timestamp.format(message.createdAt))
    }

    func conversation(_ conversation: Conversation) -> ConversationJSON {
        ConversationJSON(partner: user(conversation.partner), lastMessage: message(conversation.lastMessage))
    }

    func page<Item: Sendable & Hashable, JSON: Encodable>(_ page: Page<Item>, _ render: (Item) -> JSON) -> PageJSON<JSON> {
        PageJSON(items: page.items.map(render), nextCursor: Nullable(page.nextCursor?.description))
    }
}

/// RFC 3339 UTC with milliseconds: `2026-11-22T10:00:00.123Z`.
enum Timestamp {
    static func format(_ time: EventTime) -> String {
        time.date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}

/// An optional that JSON shows as `null`, as API.md does (`"profileImage": null`); a plain optional would be left
/// out of the object.
struct Nullable<Wrapped: Encodable>: Encodable {
    let value: Wrapped?

    init(_ value: Wrapped?) { self.value = value }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let value { try container.encode(value) } else { try container.encodeNil() }
    }
}

struct UserJSON: Encodable {
    let id: String
    let name: String
    let major: String
    let profileImage: Nullable<String>
}

struct ProfileJSON: Encodable {
    let id: String
    let name: String
    let major: String
    let bio: String
    let profileImage: Nullable<String>
    let followers: UInt64
    let following: UInt64
    let posts: UInt64
    let isFollowed: Bool
    let isMe: Bool
    /// Only on the caller's own profile; absent otherwise.
    let email: String?
}

struct PostJSON: Encodable {
    /// A reposted post, boxed: a struct cannot hold itself.
    final class Repost: Encodable {
        let post: PostJSON
        init(_ post: PostJSON) { self.post = post }
        func encode(to encoder: any Encoder) throws { try post.encode(to: encoder) }
    }

    let id: String
    let author: UserJSON
    let caption: String
    let text: String
    let image: Nullable<String>
    let repostOf: Nullable<Repost>
    let createdAt: String
    let likes: UInt64
    let comments: UInt64
    let hasLiked: Bool
}

struct CommentJSON: Encodable {
    let id: String
    let postId: String
    let author: UserJSON
    let text: String
    let createdAt: String
}

struct NotificationJSON: Encodable {
    struct PostPart: Encodable {
        let id: String
        let image: Nullable<String>
    }

    let id: String
    let type: String
    let actor: UserJSON
    let actorIsFollowed: Bool
    let post: Nullable<PostPart>
    let comment: Nullable<CommentJSON>
    let createdAt: String
}

struct MessageJSON: Encodable {
    let id: String
    let from: UserJSON
    let to: UserJSON
    let text: String
    let createdAt: String
}

struct ConversationJSON: Encodable {
    let partner: UserJSON
    let lastMessage: MessageJSON
}

struct PageJSON<Item: Encodable>: Encodable {
    let items: [Item]
    let nextCursor: Nullable<String>
}

struct AuthJSON: Encodable {
    let user: ProfileJSON
    let token: String
}

struct FollowJSON: Encodable {
    let following: Bool
    let followers: UInt64
}

struct LikeJSON: Encodable {
    let liked: Bool
    let likes: UInt64
}

struct MediaJSON: Encodable {
    let id: String
    let url: String
}
