import ChorusDomain
import ChorusLog

/// API.md's objects as the read models answer them. Images are media ids; the API turns them into URLs.
public struct UserSummary: Sendable, Hashable {
    public let id: UserID
    public let name: String
    public let major: String
    public let profileImage: MediaID?
}

public struct Profile: Sendable, Hashable {
    public let summary: UserSummary
    public let bio: String
    public let followers: UInt64
    public let following: UInt64
    public let posts: UInt64
    /// Whether the viewer follows this user.
    public let isFollowed: Bool
    public let isMe: Bool
    /// Only for the viewer's own profile.
    public let email: String?
}

public struct Post: Sendable, Hashable {
    public let id: PostID
    public let author: UserSummary
    public let caption: String
    public let text: String
    public let image: MediaID?
    /// The reposted post (shown without the post it in turn reposts).
    public let repost: Repost?
    public let createdAt: EventTime
    public let likes: UInt64
    public let comments: UInt64
    /// Whether the viewer likes it.
    public let hasLiked: Bool

    /// Boxes the reposted post, which a struct cannot hold directly.
    public indirect enum Repost: Sendable, Hashable { case of(Post) }

    public var repostOf: Post? {
        guard case .of(let post)? = repost else { return nil }
        return post
    }
}

public struct Comment: Sendable, Hashable {
    public let id: CommentID
    public let postID: PostID
    public let author: UserSummary
    public let text: String
    public let createdAt: EventTime
}

public struct Notification: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        case like, follow, comment
    }

    /// The post a like or comment was on.
    public struct PostPart: Sendable, Hashable {
        public let id: PostID
        public let image: MediaID?
    }

    /// Opaque and stable.
    public let id: String
    public let kind: Kind
    public let actor: UserSummary
    /// Whether the notified user follows the actor.
    public let actorIsFollowed: Bool
    public let post: PostPart?
    public let comment: Comment?
    public let createdAt: EventTime
}

public struct Message: Sendable, Hashable {
    public let id: MessageID
    public let from: UserSummary
    public let to: UserSummary
    public let text: String
    public let createdAt: EventTime
}

/// A row of the recent-messages list.
public struct Conversation: Sendable, Hashable {
    public let partner: UserSummary
    public let lastMessage: Message
}

/// One keyset page: items, and the cursor of the next page when there is one.
public struct Page<Item: Sendable & Hashable>: Sendable, Hashable {
    public let items: [Item]
    public let nextCursor: PageCursor?
}

/// An answer and the log position it reflects, all of it (API.md's `Chorus-Position`).
public struct Snapshot<Answer: Sendable>: Sendable {
    public let answer: Answer
    public let position: LogPosition
}
