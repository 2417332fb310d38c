import ChorusDomain
import ChorusLog
import ChorusProjections
import Foundation

/// The objects of openapi.yaml, as JSON. Made from the read models' answers; images become URLs here.
struct ObjectRenderer: Sendable {
    /// Where media is served from: `<base>/v1/media/<id>`.
    let publicBaseURL: String

    func imageURL(_ media: MediaID?) -> String? { media.map { "\(publicBaseURL)/v1/media/\($0.rawValue)" } }

    func user(_ user: UserSummary) -> UserJSON {
        UserJSON(
            id: user.id.rawValue, name: user.name, major: user.major, profileImage: imageURL(user.profileImage),
            deleted: user.deleted)
    }

    func profile(_ profile: Profile) -> ProfileJSON {
        ProfileJSON(
            id: profile.summary.id.rawValue, name: profile.summary.name, major: profile.summary.major,
            bio: profile.bio, profileImage: imageURL(profile.summary.profileImage), followers: profile.followers,
            following: profile.following, posts: profile.posts, isFollowed: profile.isFollowed, isMe: profile.isMe,
            email: profile.email, isBlocked: profile.isBlocked, isMuted: profile.isMuted,
            unreadNotifications: profile.unreadNotifications, unreadConversations: profile.unreadConversations)
    }

    /// A post read in place, written without making strings of it (see ``ChorusProjections/StoredPost``), with the
    /// post it reposts.
    func write(_ post: borrowing StoredPost, to json: inout JSONWriter) {
        switch post.repostOf {
        case .some(let original):
            write(post.post, to: &json, repostedBy: post.repostedBy) { json in
                write(original, to: &json, repostedBy: nil) { $0.null() }
            }
        case .none:
            write(post.post, to: &json, repostedBy: post.repostedBy) { $0.null() }
        }
    }

    private func write(
        _ post: borrowing StoredPost.Fields, to json: inout JSONWriter, repostedBy: borrowing StoredUserSummary?,
        repostOf: (inout JSONWriter) -> Void
    ) {
        json.object { body in
            body.field("id") { $0.string(post.id) }
            body.field("author") { write(post.author, to: &$0) }
            body.field("caption") { $0.string(post.caption) }
            body.field("text") { $0.string(post.text) }
            body.field("image") { writeImage(post.image, to: &$0) }
            body.field("repostOf", repostOf)
            body.field("createdAt", post.createdAt)
            body.field("editedAt", post.editedAt)
            body.field("likes", post.likes)
            body.field("comments", post.comments)
            body.field("hasLiked", post.hasLiked)
            body.field("reposts", post.reposts)
            body.field("hasReposted", post.hasReposted)
            switch repostedBy {
            case .some(let user): body.field("repostedBy") { write(user, to: &$0) }
            case .none: body.field("repostedBy") { $0.null() }
            }
        }
    }

    /// A user summary read in place.
    private func write(_ user: borrowing StoredUserSummary, to json: inout JSONWriter) {
        json.object { body in
            body.field("id") { $0.string(user.id) }
            body.field("name") { $0.string(user.name) }
            body.field("major") { $0.string(user.major) }
            body.field("profileImage") { writeImage(user.profileImage, to: &$0) }
            if user.deleted { body.field("deleted", true) }
        }
    }

    /// The URL of a media id read in place: `<base>/v1/media/<id>`; or null.
    private func writeImage(_ media: borrowing StoredText?, to json: inout JSONWriter) {
        switch media {
        case .some(let id): json.string(publicBaseURL, "/v1/media/", id)
        case .none: json.null()
        }
    }

    /// `{"items": [Post…], "nextCursor": …}`, the posts lent one by one by `read`; false, with nothing to answer, when
    /// `read` finds no list (nil).
    func writePostPage(to json: inout JSONWriter, _ read: ((borrowing StoredPost) throws -> Void) throws -> PageEnd?)
        throws -> Bool
    {
        var end: PageEnd?
        try json.object { body in
            try body.field("items") { json in
                try json.array(writing: { items in
                    end = try read { post in items.element { write(post, to: &$0) } }
                })
            }
            body.field("nextCursor", end?.nextCursor?.description)
        }
        return end != nil
    }

    func comment(_ comment: Comment) -> CommentJSON {
        CommentJSON(
            id: comment.id.rawValue, postId: comment.postID.rawValue, author: user(comment.author), text: comment.text,
            createdAt: comment.createdAt)
    }

    func notification(_ notification: ChorusProjections.Notification) -> NotificationJSON {
        NotificationJSON(
            id: notification.id, type: notification.kind.rawValue, actor: user(notification.actor),
            actorIsFollowed: notification.actorIsFollowed,
            post: notification.post.map { .init(id: $0.id.rawValue, image: imageURL($0.image)) },
            comment: notification.comment.map(comment), createdAt: notification.createdAt)
    }

    func message(_ message: Message) -> MessageJSON {
        MessageJSON(
            id: message.id.rawValue, from: user(message.from), to: user(message.to), text: message.text,
            createdAt: message.createdAt)
    }

    func roomMessage(_ message: RoomMessage) -> MessageJSON {
        MessageJSON(
            id: message.id.rawValue, from: user(message.from), to: nil, text: message.text,
            createdAt: message.createdAt, roomId: message.room.rawValue)
    }

    func room(_ room: Room) -> RoomJSON {
        RoomJSON(
            id: room.id.rawValue, name: room.name, members: room.members, createdAt: room.createdAt,
            isMember: room.isMember)
    }

    func conversation(_ conversation: Conversation) -> ConversationJSON {
        ConversationJSON(
            partner: user(conversation.partner), lastMessage: message(conversation.lastMessage),
            unread: conversation.unread, partnerReadUpTo: conversation.partnerReadUpTo?.rawValue)
    }

    func page<Item, JSON: JSONWritable>(_ page: Page<Item>, _ render: (Item) -> JSON) -> PageJSON<JSON> {
        PageJSON(items: page.items.map(render), nextCursor: page.nextCursor?.description)
    }
}

/// RFC 3339 UTC with milliseconds: `2026-11-22T10:00:00.123Z`. Written by hand: every post in a feed has one, and
/// Foundation's formatter cost more than the rest of the post.
enum Timestamp {
    /// Appends the timestamp's 24 characters to `text`, made on the stack and appended at once.
    static func write(_ time: EventTime, into text: inout [UInt8]) {
        let milliseconds = time.millisecondsSince1970
        let seconds = milliseconds.floorDivided(by: 1000)
        let days = seconds.floorDivided(by: 86_400)
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civilDate(daysSince1970: days)
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { characters in
            var offset = 0
            func put(_ character: UInt8) {
                characters[offset] = character
                offset += 1
            }
            /// `value`'s last `count` digits, leading zeros included.
            func digits(_ value: Int64, _ count: Int) {
                var rest = value
                for index in stride(from: offset + count - 1, through: offset, by: -1) {
                    characters[index] = UInt8(ascii: "0") + UInt8(rest % 10)
                    rest /= 10
                }
                offset += count
            }
            digits(year, 4)
            put(UInt8(ascii: "-"))
            digits(month, 2)
            put(UInt8(ascii: "-"))
            digits(day, 2)
            put(UInt8(ascii: "T"))
            digits(secondOfDay / 3600, 2)
            put(UInt8(ascii: ":"))
            digits(secondOfDay % 3600 / 60, 2)
            put(UInt8(ascii: ":"))
            digits(secondOfDay % 60, 2)
            put(UInt8(ascii: "."))
            digits(milliseconds - seconds * 1000, 3)
            put(UInt8(ascii: "Z"))
            text.append(contentsOf: characters)
        }
    }

    /// The proleptic Gregorian date of a day count (Howard Hinnant's `civil_from_days`).
    static func civilDate(daysSince1970 days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468
        let era = shifted.floorDivided(by: 146_097)
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

extension Int64 {
    fileprivate func floorDivided(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}

/// A user summary.
struct UserJSON: JSONWritable {
    let id: String
    let name: String
    let major: String
    let profileImage: String?
    /// Only a deleted account's summary has it (true).
    var deleted = false

    func write(to json: inout JSONWriter) {
        json.object {
            $0.field("id", id)
            $0.field("name", name)
            $0.field("major", major)
            $0.field("profileImage", profileImage)
            if deleted { $0.field("deleted", true) }
        }
    }
}

struct ProfileJSON: JSONWritable {
    let id: String
    let name: String
    let major: String
    let bio: String
    let profileImage: String?
    let followers: UInt64
    let following: UInt64
    let posts: UInt64
    let isFollowed: Bool
    let isMe: Bool
    /// Only on the caller's own profile; absent otherwise.
    let email: String?
    /// Whether the caller blocked, or muted, this user.
    let isBlocked: Bool
    let isMuted: Bool
    /// Only on the caller's own profile; absent otherwise.
    let unreadNotifications: UInt64?
    let unreadConversations: UInt64?

    func write(to json: inout JSONWriter) {
        json.object {
            $0.field("id", id)
            $0.field("name", name)
            $0.field("major", major)
            $0.field("bio", bio)
            $0.field("profileImage", profileImage)
            $0.field("followers", followers)
            $0.field("following", following)
            $0.field("posts", posts)
            $0.field("isFollowed", isFollowed)
            $0.field("isMe", isMe)
            if let email { $0.field("email", email) }
            $0.field("isBlocked", isBlocked)
            $0.field("isMuted", isMuted)
            if let unreadNotifications { $0.field("unreadNotifications", unreadNotifications) }
            if let unreadConversations { $0.field("unreadConversations", unreadConversations) }
        }
    }
}

struct CommentJSON: JSONWritable {
    let id: String
    let postId: String
    let author: UserJSON
    let text: String
    let createdAt: EventTime

    func write(to json: inout JSONWriter) {
        json.object {
            $0.field("id", id)
            $0.field("postId", postId)
            $0.field("author", author)
            $0.field("text", text)
            $0.field("createdAt", createdAt)
        }
    }
}

struct NotificationJSON: JSONWritable {
    struct PostPart: JSONWritable {
        let id: String
        let image: String?

        func write(to json: inout JSONWriter) {
            json.object {
                $0.field("id", id)
                $0.field("image", image)
            }
        }
    }

    let id: String
    let type: String
    let actor: UserJSON
    let actorIsFollowed: Bool
    let post: PostPart?
    let comment: CommentJSON?
    let createdAt: EventTime

    func write(to json: inout JSONWriter) {
        json.object {
            $0.field("id", id)
            $0.field("type", type)
            $0.field("actor", actor)
            $0.field("actorIsFollowed", actorIsFollowed)
            $0.field("post", post)
            $0.field("comment", comment)
            $0.field("createdAt", createdAt)
        }
    }
}

/// A direct message (`to` set, `roomId` null) or a room's (`to` null, `roomId` set).
struct MessageJSON: JSONWritable {
    let id: String
    let from: UserJSON
    let to: UserJSON?
    /// Null once the sender's account was deleted.
    let text: String?
    let createdAt: EventTime
    var roomId: String? = nil

    func write(to json: inout JSONWriter) {
        json.object {
            $0.field("id", id)
            $0.field("from", from)
            $0.field("to", to)
            $0.field("text", text)
            $0.field("createdAt", createdAt)
            $0.field("roomId", roomId)
        }
    }
}

struct RoomJSON: JSONWritable {
    let id: String
    let name: String
    let members: UInt64
    let createdAt: EventTime
    let isMember: Bool

    func write(to json: inout JSONWriter) {
        json.object {
            $0.field("id", id)
            $0.field("name", name)
            $0.field("members", members)
            $0.field("createdAt", createdAt)
            $0.field("isMember", isMember)
        }
    }
}

struct ConversationJSON: JSONWritable {
    let partner: UserJSON
    let lastMessage: MessageJSON
    let unread: UInt64
    let partnerReadUpTo: String?

    func write(to json: inout JSONWriter) {
        json.object {
            $0.field("partner", partner)
            $0.field("lastMessage", lastMessage)
            $0.field("unread", unread)
            $0.field("partnerReadUpTo", partnerReadUpTo)
        }
    }
}

/// The answer of marking notifications or a conversation read: what is left unread (`unreadNotifications` or
/// `unreadConversations`).
struct UnreadJSON: JSONWritable {
    let name: StaticString
    let count: UInt64

    func write(to json: inout JSONWriter) {
        json.object { $0.field(name, count) }
    }
}

/// The `read` event of the `conversations` topic: the partner who read, and the newest of the caller's messages they
/// have read.
struct ReadReceiptJSON: JSONWritable {
    let userId: String
    let partnerReadUpTo: String?

    func write(to json: inout JSONWriter) {
        json.object {
            $0.field("userId", userId)
            $0.field("partnerReadUpTo", partnerReadUpTo)
        }
    }
}

struct PageJSON<Item: JSONWritable>: JSONWritable {
    let items: [Item]
    let nextCursor: String?

    func write(to json: inout JSONWriter) {
        json.object {
            $0.field("items", items)
            $0.field("nextCursor", nextCursor)
        }
    }
}

struct AuthJSON: JSONWritable {
    let user: ProfileJSON
    let token: String

    func write(to json: inout JSONWriter) {
        json.object {
            $0.field("user", user)
            $0.field("token", token)
        }
    }
}

struct FollowJSON: JSONWritable {
    let following: Bool
    let followers: UInt64

    func write(to json: inout JSONWriter) {
        json.object {
            $0.field("following", following)
            $0.field("followers", followers)
        }
    }
}

/// The answer of `PUT|DELETE /v1/posts/{id}/repost`.
struct RepostJSON: JSONWritable {
    let reposted: Bool
    let reposts: UInt64

    func write(to json: inout JSONWriter) {
        json.object {
            $0.field("reposted", reposted)
            $0.field("reposts", reposts)
        }
    }
}

struct LikeJSON: JSONWritable {
    let liked: Bool
    let likes: UInt64

    func write(to json: inout JSONWriter) {
        json.object {
            $0.field("liked", liked)
            $0.field("likes", likes)
        }
    }
}

struct MediaJSON: JSONWritable {
    let id: String
    let url: String

    func write(to json: inout JSONWriter) {
        json.object {
            $0.field("id", id)
            $0.field("url", url)
        }
    }
}

/// Times are written as ``Timestamp``s, straight into the answer: each post, comment, message and notification has one.
extension EventTime: JSONWritable {
    func write(to json: inout JSONWriter) { json.timestamp(self) }
}
