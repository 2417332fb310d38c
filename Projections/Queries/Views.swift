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
public struct Page<Item> {
    public let items: [Item]
    public let nextCursor: PageCursor?

    /// The same page with each item transformed.
    public func map<Other>(_ transform: (Item) throws -> Other) rethrows -> Page<Other> {
        Page<Other>(items: try items.map(transform), nextCursor: nextCursor)
    }
}

extension Page: Sendable where Item: Sendable {}
extension Page: Equatable where Item: Equatable {}
extension Page: Hashable where Item: Hashable {}

/// A post as the snapshot stores it, read in place: every byte buffer is UTF-8 in the snapshot's pages, valid only
/// inside the closure the snapshot's view was handed to. For answers written out inside the snapshot without making a
/// string of every field (a feed page's strings and their reference counting were most of its cost); ``Post`` is
/// the copy that outlives it.
public struct StoredPost {
    /// What a post and the post it reposts both show.
    public struct Fields {
        public let id: UnsafeRawBufferPointer
        public let author: StoredUserSummary
        public let caption: UnsafeRawBufferPointer
        public let text: UnsafeRawBufferPointer
        /// A media id.
        public let image: UnsafeRawBufferPointer?
        public let createdAt: EventTime
        public let likes: UInt64
        public let comments: UInt64
        public let hasLiked: Bool
    }

    public let post: Fields
    /// The reposted post (shown without the post it in turn reposts).
    public let repostOf: Fields?
}

/// A ``UserSummary`` read in place, as ``StoredPost`` is.
public struct StoredUserSummary {
    public let id: UnsafeRawBufferPointer
    public let name: UnsafeRawBufferPointer
    public let major: UnsafeRawBufferPointer
    /// A media id.
    public let profileImage: UnsafeRawBufferPointer?
}

extension Post {
    /// The copy of a stored post that outlives its snapshot.
    public init(_ stored: StoredPost) {
        self.init(stored.post, repost: stored.repostOf.map { .of(Post($0, repost: nil)) })
    }

    private init(_ fields: StoredPost.Fields, repost: Repost?) {
        self.init(
            id: PostID(unchecked: String(copying: fields.id)), author: UserSummary(fields.author),
            caption: String(copying: fields.caption), text: String(copying: fields.text),
            image: fields.image.map { MediaID(unchecked: String(copying: $0)) }, repost: repost,
            createdAt: fields.createdAt, likes: fields.likes, comments: fields.comments, hasLiked: fields.hasLiked)
    }
}

extension UserSummary {
    /// The copy of a stored summary that outlives its snapshot.
    public init(_ stored: StoredUserSummary) {
        self.init(
            id: UserID(unchecked: String(copying: stored.id)), name: String(copying: stored.name),
            major: String(copying: stored.major), profileImage: stored.profileImage.map { MediaID(unchecked: String(copying: $0)) })
    }
}

extension String {
    /// A string of these UTF-8 bytes.
    init(copying utf8: UnsafeRawBufferPointer) { self.init(decoding: utf8, as: UTF8.self) }
}

/// An answer and the log position it reflects, all of it (API.md's `Chorus-Position`).
public struct Snapshot<Answer: Sendable>: Sendable {
    public let answer: Answer
    public let position: LogPosition
}
