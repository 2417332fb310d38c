import ChorusBackend
import ChorusDomain
import ChorusLog
import ChorusProjections
import Foundation
import Synchronization

/// The objects of openapi.yaml, as JSON. Made from the read models' answers; images become URLs here.
struct ObjectRenderer: Sendable {
    /// Where media is served from: `<base>/v1/media/<id>`.
    let publicBaseURL: String
    /// The images' sizes and BlurHashes, for the `media` of posts.
    let mediaStore: MediaStore
    /// What a post's image shows of itself but its alt text, as JSON members: the same wherever the image is shown.
    let imageMembers = ImageMembers()

    /// `<base>/v1/media/<id>`, with the query of `size`; a profile image is its `small` variant.
    func imageURL(_ media: MediaID?, size: MediaSize = .large) -> String? {
        media.map { "\(publicBaseURL)/v1/media/\($0.rawValue)\(size.query)" }
    }

    /// The API's `Media`; in a post, with its `alt` (which may be null).
    func mediaJSON(_ media: MediaID, info: MediaInfo?, alt: String?? = .none) -> MediaJSON {
        MediaJSON(
            id: media.rawValue, url: imageURL(media) ?? "", smallURL: imageURL(media, size: .small) ?? "",
            type: (info?.large.type ?? mediaStore.type(of: media) ?? .jpeg).rawValue, info: info, alt: alt)
    }

    func user(_ user: UserSummary) -> UserJSON {
        UserJSON(
            id: user.id.rawValue, handle: user.handle, name: user.name, major: user.major,
            profileImage: imageURL(user.profileImage, size: .small),
            deleted: user.deleted)
    }

    func profile(_ profile: Profile) -> ProfileJSON {
        ProfileJSON(
            id: profile.summary.id.rawValue, handle: profile.summary.handle, name: profile.summary.name,
            major: profile.summary.major,
            bio: profile.bio, profileImage: imageURL(profile.summary.profileImage, size: .small),
            followers: profile.followers,
            following: profile.following, posts: profile.posts, isFollowed: profile.isFollowed, isMe: profile.isMe,
            email: profile.email, isBlocked: profile.isBlocked, isMuted: profile.isMuted,
            isPrivate: profile.isPrivate, followRequested: profile.followRequested,
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
            // Version 1 clients show the first image.
            body.field("image") { json in
                if post.media.withFirstID({ json.string(publicBaseURL, "/v1/media/", $0) }) == nil { json.null() }
            }
            body.field("media") { json in
                json.array(writing: { items in
                    post.media.forEachImage { id, alt in items.element { writeImage(id, alt: alt, to: &$0) } }
                })
            }
            body.field("repostOf", repostOf)
            body.field("createdAt", post.createdAt)
            body.field("editedAt", post.editedAt)
            body.field("likes", post.likes)
            body.field("comments", post.comments)
            body.field("hasLiked", post.hasLiked)
            body.field("reposts", post.reposts)
            body.field("hasReposted", post.hasReposted)
            body.field("hasBookmarked", post.hasBookmarked)
            body.field("replies") { $0.string(post.replies.rawValue) }
            body.field("hashtags") { json in
                json.array(writing: { items in for tag in post.hashtags { items.element { $0.string(tag) } } })
            }
            body.field("mentions") { $0.array(post.mentions.map(user)) }
            switch repostedBy {
            case .some(let user): body.field("repostedBy") { write(user, to: &$0) }
            case .none: body.field("repostedBy") { $0.null() }
            }
        }
    }

    /// One of a post's images read in place, as ``MediaJSON`` writes a `Media`: its members but `alt` made once per
    /// image and kept (a page of posts of four images has eighty).
    private func writeImage(_ id: borrowing StoredText, alt: borrowing StoredText?, to json: inout JSONWriter) {
        let members = id.withUTF8 { span in
            span.withUnsafeBytes { utf8 in
                imageMembers.members(of: utf8) {
                    let info = mediaStore.info(ofUTF8: utf8)
                    var members = JSONWriter(capacity: 512)
                    members.object { writeMembers(of: id, info: info, to: &$0) }
                    // Without the object's braces; kept once the image's info is known (a cluster node may fetch it
                    // later).
                    return (Array(members.bytes.dropFirst().dropLast()), info != nil)
                }
            }
        }
        json.object(startingWith: members) { body in
            switch alt {
            case .some(let text): body.field("alt") { $0.string(text) }
            case .none: body.field("alt") { $0.null() }
            }
        }
    }

    private func writeMembers(of id: borrowing StoredText, info: MediaInfo?, to body: inout JSONWriter) {
        body.field("id") { $0.string(id) }
        body.field("url") { $0.string(publicBaseURL, "/v1/media/", id) }
        guard let info else {
            // An image of an older Chorus, served as it was stored.
            let type = MediaID(id.string).flatMap { mediaStore.type(of: $0) } ?? .jpeg
            return body.field("type", type.rawValue)
        }
        body.field("type", info.large.type.rawValue)
        body.field("width", info.width)
        body.field("height", info.height)
        body.field("blurhash", info.blurhash)
        body.field("variants") { variants in
            variants.object { sizes in
                sizes.field("small") { writeVariant(info.small, id, query: "?size=small", to: &$0) }
                sizes.field("large") { writeVariant(info.large, id, query: "", to: &$0) }
            }
        }
    }

    private func writeVariant(
        _ variant: MediaInfo.Variant, _ id: borrowing StoredText, query: StaticString, to json: inout JSONWriter
    ) {
        json.object { body in
            body.field("url") { $0.string(publicBaseURL, "/v1/media/", id, query) }
            body.field("width", variant.width)
            body.field("height", variant.height)
        }
    }

    /// A user summary read in place.
    private func write(_ user: borrowing StoredUserSummary, to json: inout JSONWriter) {
        json.object { body in
            body.field("id") { $0.string(user.id) }
            body.field("handle") { $0.string(user.handle) }
            body.field("name") { $0.string(user.name) }
            body.field("major") { $0.string(user.major) }
            body.field("profileImage") { writeImage(user.profileImage, size: .small, to: &$0) }
            if user.deleted { body.field("deleted", true) }
        }
    }

    /// The URL of a media id read in place, as ``imageURL(_:size:)`` makes it; or null.
    private func writeImage(_ media: borrowing StoredText?, size: MediaSize = .large, to json: inout JSONWriter) {
        switch media {
        case .some(let id): json.string(publicBaseURL, "/v1/media/", id, size.query)
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
            createdAt: comment.createdAt, mentions: comment.mentions.map(user))
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

extension MediaSize {
    /// What a media URL ends with to ask for this size: nothing for `large`, which is served by default.
    var query: StaticString {
        switch self {
        case .large: ""
        case .small: "?size=small"
        }
    }
}
