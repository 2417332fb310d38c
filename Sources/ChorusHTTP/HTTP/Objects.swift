import ChorusBackend
import ChorusLog
import Foundation

/// A user summary.
struct UserJSON: JSONWritable {
    let id: String
    let handle: String
    let name: String
    let major: String
    let profileImage: String?
    /// Only a deleted account's summary has it (true).
    var deleted = false

    func write(to json: inout JSONWriter) {
        json.object {
            $0.field("id", id)
            $0.field("handle", handle)
            $0.field("name", name)
            $0.field("major", major)
            $0.field("profileImage", profileImage)
            if deleted { $0.field("deleted", true) }
        }
    }
}

struct ProfileJSON: JSONWritable {
    let id: String
    let handle: String
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
    /// Whether only accepted followers see this user's posts, tabs and lists.
    let isPrivate: Bool
    /// Whether the caller asked to follow this private account and awaits the answer.
    let followRequested: Bool
    /// Only on the caller's own profile; absent otherwise.
    let unreadNotifications: UInt64?
    let unreadConversations: UInt64?

    func write(to json: inout JSONWriter) {
        json.object {
            $0.field("id", id)
            $0.field("handle", handle)
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
            $0.field("isPrivate", isPrivate)
            $0.field("followRequested", followRequested)
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
    let mentions: [UserJSON]

    func write(to json: inout JSONWriter) {
        json.object {
            $0.field("id", id)
            $0.field("postId", postId)
            $0.field("author", author)
            $0.field("text", text)
            $0.field("createdAt", createdAt)
            $0.field("mentions") { $0.array(mentions) }
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

/// The answer of `PUT|DELETE /v1/users/{id}/follow`: `requested` while a private account has the request pending.
struct FollowJSON: JSONWritable {
    let following: Bool
    let requested: Bool
    let followers: UInt64

    func write(to json: inout JSONWriter) {
        json.object {
            $0.field("following", following)
            $0.field("requested", requested)
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

/// The API's `Media`: an image's URL (its `large` variant), upright size, BlurHash and variants. An image stored by
/// an older Chorus, as it was uploaded, has only `id`, `url` and `type`.
struct MediaJSON: JSONWritable {
    let id: String
    let url: String
    let smallURL: String
    let type: String
    let info: MediaInfo?
    /// `nil` outside a post; a post's images always carry theirs (`null` when there is none).
    var alt: String?? = .none

    func write(to json: inout JSONWriter) {
        json.object { body in
            body.field("id", id)
            body.field("url", url)
            body.field("type", type)
            if let info {
                body.field("width", info.width)
                body.field("height", info.height)
                body.field("blurhash", info.blurhash)
                body.field("variants") { variants in
                    variants.object {
                        $0.field("small") { write(info.small, url: smallURL, to: &$0) }
                        $0.field("large") { write(info.large, url: url, to: &$0) }
                    }
                }
            }
            if case .some(let alt) = alt { body.field("alt", alt) }
        }
    }

    private func write(_ variant: MediaInfo.Variant, url: String, to json: inout JSONWriter) {
        json.object {
            $0.field("url", url)
            $0.field("width", variant.width)
            $0.field("height", variant.height)
        }
    }
}
