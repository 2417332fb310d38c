import ChorusBackend
import ChorusDomain
import ChorusLog
import ChorusProjections
import Foundation

/// The objects of openapi.yaml, as JSON. Made from the read models' answers; images become URLs here.
struct ObjectRenderer: Sendable {
    /// Where media is served from: `<base>/v1/media/<id>`.
    let publicBaseURL: String
    /// The images' sizes and BlurHashes, for the `media` of posts.
    let mediaStore: MediaStore

    /// `<base>/v1/media/<id>`, with the query of `size`; a profile image is its `small` variant.
    func imageURL(_ media: MediaID?, size: MediaSize = .large) -> String? {
        media.map { "\(publicBaseURL)/v1/media/\($0.rawValue)\(size.query)" }
    }

    /// The API's `Media`; in a post, with its `alt` (which may be null).
    func mediaJSON(_ media: MediaID, info: MediaInfo?, alt: String?? = .none) -> MediaJSON {
        MediaJSON(
            id: media.rawValue, url: imageURL(media) ?? "", smallURL: imageURL(media, size: .small) ?? "",
            type: (info?.large.type ?? .jpeg).rawValue, info: info, alt: alt)
    }

    func user(_ user: UserSummary) -> UserJSON {
        UserJSON(
            id: user.id.rawValue, name: user.name, major: user.major,
            profileImage: imageURL(user.profileImage, size: .small),
            deleted: user.deleted)
    }

    func profile(_ profile: Profile) -> ProfileJSON {
        ProfileJSON(
            id: profile.summary.id.rawValue, name: profile.summary.name, major: profile.summary.major,
            bio: profile.bio, profileImage: imageURL(profile.summary.profileImage, size: .small),
            followers: profile.followers,
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
            var media: [MediaJSON] = []
            post.media.forEachImage { id, alt in
                guard let id = MediaID(id.string) else { return }
                let alt: String? =
                    switch alt {
                    case .some(let text): text.string
                    case .none: nil
                    }
                media.append(mediaJSON(id, info: mediaStore.info(of: id), alt: .some(alt)))
            }
            // Version 1 clients show the first image.
            body.field("image") { json in
                if let first = media.first { json.string(first.url) } else { json.null() }
            }
            body.field("media", media)
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

extension MediaSize {
    /// What a media URL ends with to ask for this size: nothing for `large`, which is served by default.
    var query: StaticString {
        switch self {
        case .large: ""
        case .small: "?size=small"
        }
    }
}
