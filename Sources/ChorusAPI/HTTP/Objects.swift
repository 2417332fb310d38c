import ChorusDomain
import ChorusLog
import ChorusProjections
import Foundation

/// API.md's objects, as JSON. Made from the read models' answers; images become URLs here.
struct ObjectRenderer: Sendable {
    /// Where media is served from: `<base>/v1/media/<id>`.
    let publicBaseURL: String

    func imageURL(_ media: MediaID?) -> String? { media.map { "\(publicBaseURL)/v1/media/\($0.rawValue)" } }

    func user(_ user: UserSummary) -> UserJSON<String, String> {
        UserJSON(id: user.id.rawValue, name: user.name, major: user.major, profileImage: imageURL(user.profileImage))
    }

    /// A user summary read in place, written without making strings of it.
    func user(_ user: StoredUserSummary) -> UserJSON<UTF8Text, MediaURL> {
        UserJSON(
            id: UTF8Text(user.id), name: UTF8Text(user.name), major: UTF8Text(user.major),
            profileImage: user.profileImage.map { MediaURL(base: publicBaseURL, id: $0) })
    }

    func profile(_ profile: Profile) -> ProfileJSON {
        ProfileJSON(
            id: profile.summary.id.rawValue, name: profile.summary.name, major: profile.summary.major,
            bio: profile.bio, profileImage: imageURL(profile.summary.profileImage), followers: profile.followers,
            following: profile.following, posts: profile.posts, isFollowed: profile.isFollowed, isMe: profile.isMe,
            email: profile.email)
    }

    /// A post read in place, written without making strings of it (see ``ChorusProjections/StoredPost``).
    func post(_ post: StoredPost) -> PostJSON {
        PostJSON(post: post.post, repostOf: post.repostOf, renderer: self)
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

    func conversation(_ conversation: Conversation) -> ConversationJSON {
        ConversationJSON(partner: user(conversation.partner), lastMessage: message(conversation.lastMessage))
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

/// A user summary: from a ``UserSummary`` (strings), or from a ``ChorusProjections/StoredUserSummary`` read in place.
struct UserJSON<Text: JSONWritable, Image: JSONWritable>: JSONWritable {
    let id: Text
    let name: Text
    let major: Text
    let profileImage: Image?

    func write(to json: inout JSONWriter) {
        json.object {
            $0.field("id", id)
            $0.field("name", name)
            $0.field("major", major)
            $0.field("profileImage", profileImage)
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
        }
    }
}

/// A post, and inside it the post it reposts (without the one that reposts in turn).
struct PostJSON: JSONWritable {
    let post: StoredPost.Fields
    let repostOf: StoredPost.Fields?
    let renderer: ObjectRenderer

    func write(to json: inout JSONWriter) {
        json.object {
            $0.field("id", UTF8Text(post.id))
            $0.field("author", renderer.user(post.author))
            $0.field("caption", UTF8Text(post.caption))
            $0.field("text", UTF8Text(post.text))
            $0.field("image", post.image.map { MediaURL(base: renderer.publicBaseURL, id: $0) })
            $0.field("repostOf", repostOf.map { PostJSON(post: $0, repostOf: nil, renderer: renderer) })
            $0.field("createdAt", post.createdAt)
            $0.field("likes", post.likes)
            $0.field("comments", post.comments)
            $0.field("hasLiked", post.hasLiked)
        }
    }
}

/// Text read in place, as UTF-8.
struct UTF8Text: JSONWritable {
    let utf8: UnsafeRawBufferPointer

    init(_ utf8: UnsafeRawBufferPointer) { self.utf8 = utf8 }

    func write(to json: inout JSONWriter) { json.string(utf8: utf8) }
}

/// The URL of a media id read in place: `<base>/v1/media/<id>`.
struct MediaURL: JSONWritable {
    let base: String
    let id: UnsafeRawBufferPointer

    func write(to json: inout JSONWriter) { json.string(base, "/v1/media/", utf8: id) }
}

struct CommentJSON: JSONWritable {
    let id: String
    let postId: String
    let author: UserJSON<String, String>
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
    let actor: UserJSON<String, String>
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

struct MessageJSON: JSONWritable {
    let id: String
    let from: UserJSON<String, String>
    let to: UserJSON<String, String>
    let text: String
    let createdAt: EventTime

    func write(to json: inout JSONWriter) {
        json.object {
            $0.field("id", id)
            $0.field("from", from)
            $0.field("to", to)
            $0.field("text", text)
            $0.field("createdAt", createdAt)
        }
    }
}

struct ConversationJSON: JSONWritable {
    let partner: UserJSON<String, String>
    let lastMessage: MessageJSON

    func write(to json: inout JSONWriter) {
        json.object {
            $0.field("partner", partner)
            $0.field("lastMessage", lastMessage)
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
