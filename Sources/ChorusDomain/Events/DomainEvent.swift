import ChorusLog

/// Everything that can happen in Chorus, in the past tense. Each is stored as one log event; its stream is the
/// aggregate it belongs to (a user, a post, a conversation).
public enum DomainEvent: Sendable, Hashable {
    case userRegistered(UserRegistered)
    case profileEdited(ProfileEdited)
    case postCreated(PostCreated)
    case postEdited(PostEdited)
    case postDeleted(PostDeleted)
    case liked(Liked)
    case unliked(Unliked)
    case reposted(Reposted)
    case unreposted(Unreposted)
    case commentAdded(CommentAdded)
    case commentDeleted(CommentDeleted)
    case followed(Followed)
    case unfollowed(Unfollowed)
    case messageSent(MessageSent)
    case roomCreated(RoomCreated)
    case roomJoined(RoomJoined)
    case roomLeft(RoomLeft)
    case roomMessageSent(RoomMessageSent)
    case notificationsRead(NotificationsRead)
    case conversationRead(ConversationRead)
    case sessionStarted(SessionStarted)
    case sessionEnded(SessionEnded)
    case passwordChanged(PasswordChanged)
    case passwordResetRequested(PasswordResetRequested)
    case blocked(Blocked)
    case unblocked(Unblocked)
    case muted(Muted)
    case unmuted(Unmuted)
    case reportFiled(ReportFiled)
    case reportResolved(ReportResolved)
    case userSuspended(UserSuspended)
    case userUnsuspended(UserUnsuspended)
    case accountDeleted(AccountDeleted)
    case erasureCompleted(ErasureCompleted)
}

public struct UserRegistered: Sendable, Hashable {
    public var user: UserID
    /// As given, trimmed; compared without case for uniqueness.
    public var email: String
    /// bcrypt.
    public var passwordHash: String
    public var name: String
    public var major: String
    public var bio: String
    public init(user: UserID, email: String, passwordHash: String, name: String, major: String, bio: String) {
        self.user = user
        self.email = email
        self.passwordHash = passwordHash
        self.name = name
        self.major = major
        self.bio = bio
    }
}

/// A change of profile image: a new one, or none.
public enum ProfileImageChange: Sendable, Hashable {
    case set(MediaID)
    case remove
}

/// Only the fields that changed are present.
public struct ProfileEdited: Sendable, Hashable {
    public var user: UserID
    public var name: String?
    public var major: String?
    public var bio: String?
    public var profileImage: ProfileImageChange?
    public init(user: UserID, name: String?, major: String?, bio: String?, profileImage: ProfileImageChange?) {
        self.user = user
        self.name = name
        self.major = major
        self.bio = bio
        self.profileImage = profileImage
    }
}

public struct PostCreated: Sendable, Hashable {
    public var post: PostID
    public var author: UserID
    public var caption: String
    public var text: String
    public var image: MediaID?
    public var repostOf: PostID?
    public init(post: PostID, author: UserID, caption: String, text: String, image: MediaID?, repostOf: PostID?) {
        self.post = post
        self.author = author
        self.caption = caption
        self.text = text
        self.image = image
        self.repostOf = repostOf
    }
}

/// The author changed a post's caption or text; only the fields that changed are present. The time of the edit is the
/// event's.
public struct PostEdited: Sendable, Hashable {
    public var post: PostID
    public var author: UserID
    public var caption: String?
    public var text: String?
    public init(post: PostID, author: UserID, caption: String?, text: String?) {
        self.post = post
        self.author = author
        self.caption = caption
        self.text = text
    }
}

/// A post was deleted: by its author, or with the post it plainly reposted. `author`, `postedAt` (the position of its
/// ``PostCreated``) and `repostOf` are facts of the decision, recorded so that whoever follows the log can take out
/// everything the post put in without looking it up.
public struct PostDeleted: Sendable, Hashable {
    public var post: PostID
    public var author: UserID
    public var postedAt: LogPosition
    /// The post it reposted, if it was a repost.
    public var repostOf: PostID?
    public init(post: PostID, author: UserID, postedAt: LogPosition, repostOf: PostID?) {
        self.post = post
        self.author = author
        self.postedAt = postedAt
        self.repostOf = repostOf
    }
}

/// `postAuthor`, the author of the liked post, is a fact of the decision (a post's author never changes), recorded so
/// that whoever follows the log can notify the author without looking the post up. Nil only in events recorded
/// before schema version 2, which did not carry it.
public struct Liked: Sendable, Hashable {
    public var user: UserID
    public var post: PostID
    public var postAuthor: UserID?
    public init(user: UserID, post: PostID, postAuthor: UserID?) {
        self.user = user
        self.post = post
        self.postAuthor = postAuthor
    }
}

/// `postAuthor` as in ``Liked``; `likedAt`, the position of the like this takes back, so that whoever follows the
/// log can take back what that like did without looking it up. Both nil only in events recorded before schema
/// version 2.
public struct Unliked: Sendable, Hashable {
    public var user: UserID
    public var post: PostID
    public var postAuthor: UserID?
    public var likedAt: LogPosition?
    public init(user: UserID, post: PostID, postAuthor: UserID?, likedAt: LogPosition?) {
        self.user = user
        self.post = post
        self.postAuthor = postAuthor
        self.likedAt = likedAt
    }
}

/// A plain repost: `user` shares `post` (always an original, never a plain repost) with their followers, who see it in
/// their feeds as that post, reposted by `user`. `postAuthor` as in ``Liked``.
public struct Reposted: Sendable, Hashable {
    public var user: UserID
    public var post: PostID
    public var postAuthor: UserID
    public init(user: UserID, post: PostID, postAuthor: UserID) {
        self.user = user
        self.post = post
        self.postAuthor = postAuthor
    }
}

/// Takes a plain repost back: it leaves every feed, tab and notification it was in. `repostedAt`, the position of the
/// ``Reposted`` this takes back, so that whoever follows the log can find what it put in without looking it up.
public struct Unreposted: Sendable, Hashable {
    public var user: UserID
    public var post: PostID
    public var postAuthor: UserID
    public var repostedAt: LogPosition
    public init(user: UserID, post: PostID, postAuthor: UserID, repostedAt: LogPosition) {
        self.user = user
        self.post = post
        self.postAuthor = postAuthor
        self.repostedAt = repostedAt
    }
}

/// `author` wrote the comment; `postAuthor` (as in ``Liked``) wrote the post, and is filled in by the decision.
public struct CommentAdded: Sendable, Hashable {
    public var comment: CommentID
    public var post: PostID
    public var author: UserID
    public var text: String
    public var postAuthor: UserID?
    public init(comment: CommentID, post: PostID, author: UserID, text: String, postAuthor: UserID? = nil) {
        self.comment = comment
        self.post = post
        self.author = author
        self.text = text
        self.postAuthor = postAuthor
    }
}

/// A comment was deleted, by its author or by the post's author. `author` wrote the comment, `postAuthor` the post, and
/// `commentedAt` is the position of its ``CommentAdded``: facts of the decision, as in ``PostDeleted``.
public struct CommentDeleted: Sendable, Hashable {
    public var comment: CommentID
    public var post: PostID
    public var author: UserID
    public var postAuthor: UserID
    public var commentedAt: LogPosition
    public init(comment: CommentID, post: PostID, author: UserID, postAuthor: UserID, commentedAt: LogPosition) {
        self.comment = comment
        self.post = post
        self.author = author
        self.postAuthor = postAuthor
        self.commentedAt = commentedAt
    }
}

public struct Followed: Sendable, Hashable {
    public var follower: UserID
    public var followee: UserID
    public init(follower: UserID, followee: UserID) {
        self.follower = follower
        self.followee = followee
    }
}

/// `followedAt`, the position of the follow this takes back (as `likedAt` in ``Unliked``); nil only in events
/// recorded before schema version 2.
public struct Unfollowed: Sendable, Hashable {
    public var follower: UserID
    public var followee: UserID
    public var followedAt: LogPosition?
    public init(follower: UserID, followee: UserID, followedAt: LogPosition?) {
        self.follower = follower
        self.followee = followee
        self.followedAt = followedAt
    }
}

public struct MessageSent: Sendable, Hashable {
    public var message: MessageID
    public var from: UserID
    public var to: UserID
    public var text: String
    public init(message: MessageID, from: UserID, to: UserID, text: String) {
        self.message = message
        self.from = from
        self.to = to
        self.text = text
    }
}

/// A room was made. Its name belongs to the room, which its members share, not to its creator: it is not sealed, and
/// stays after the creator's account is erased. The creator joins it by a ``RoomJoined`` of the same command.
public struct RoomCreated: Sendable, Hashable {
    public var room: RoomID
    public var creator: UserID
    public var name: String
    public init(room: RoomID, creator: UserID, name: String) {
        self.room = room
        self.creator = creator
        self.name = name
    }
}

public struct RoomJoined: Sendable, Hashable {
    public var room: RoomID
    public var user: UserID
    public init(room: RoomID, user: UserID) {
        self.room = room
        self.user = user
    }
}

/// `joinedAt`, the position of the ``RoomJoined`` this ends, so that whoever follows the log can take out what it put
/// in without looking it up.
public struct RoomLeft: Sendable, Hashable {
    public var room: RoomID
    public var user: UserID
    public var joinedAt: LogPosition
    public init(room: RoomID, user: UserID, joinedAt: LogPosition) {
        self.room = room
        self.user = user
        self.joinedAt = joinedAt
    }
}

/// A message to everyone in a room, by one of its members; its text sealed under its sender's key, as a direct
/// message's.
public struct RoomMessageSent: Sendable, Hashable {
    public var message: MessageID
    public var room: RoomID
    public var from: UserID
    public var text: String
    public init(message: MessageID, room: RoomID, from: UserID, text: String) {
        self.message = message
        self.room = room
        self.from = from
        self.text = text
    }
}

/// The user has seen their notifications up to the one made at `upTo`: those are no longer unread.
public struct NotificationsRead: Sendable, Hashable {
    public var user: UserID
    public var upTo: LogPosition
    public init(user: UserID, upTo: LogPosition) {
        self.user = user
        self.upTo = upTo
    }
}

/// `reader` has read their conversation with `partner` up to this event: every message before it is read (what the
/// partner sees as a read receipt).
public struct ConversationRead: Sendable, Hashable {
    public var reader: UserID
    public var partner: UserID
    public init(reader: UserID, partner: UserID) {
        self.reader = reader
        self.partner = partner
    }
}

/// A user signed in (or registered): the session lasts until it expires or the user signs out.
public struct SessionStarted: Sendable, Hashable {
    public static let lifetime: Duration = .seconds(30 * 24 * 3600)

    public var session: SessionID
    public var user: UserID
    public var expiresAt: EventTime
    public init(session: SessionID, user: UserID, expiresAt: EventTime) {
        self.session = session
        self.user = user
        self.expiresAt = expiresAt
    }
}

/// A user signed out of one session.
public struct SessionEnded: Sendable, Hashable {
    public var session: SessionID
    public var user: UserID
    public init(session: SessionID, user: UserID) {
        self.session = session
        self.user = user
    }
}

/// A user's password changed, by the user or through a reset. The sessions it ends are ``SessionEnded`` events of the
/// same command; `revokedResets` are the resets that were still open, which can no longer be used.
public struct PasswordChanged: Sendable, Hashable {
    public var user: UserID
    /// bcrypt.
    public var passwordHash: String
    public var revokedResets: [ResetID]
    public init(user: UserID, passwordHash: String, revokedResets: [ResetID]) {
        self.user = user
        self.passwordHash = passwordHash
        self.revokedResets = revokedResets
    }
}

/// Someone asked to reset a user's password: a token for this reset goes out to the user's e-mail (through the
/// `password_reset.requested` webhook), usable once until `expiresAt`.
public struct PasswordResetRequested: Sendable, Hashable {
    public static let lifetime: Duration = .seconds(3600)

    public var user: UserID
    public var reset: ResetID
    public var expiresAt: EventTime
    public init(user: UserID, reset: ResetID, expiresAt: EventTime) {
        self.user = user
        self.reset = reset
        self.expiresAt = expiresAt
    }
}

/// `blocker` blocked `blocked`: neither can reach the other any more. The follows between them end by ``Unfollowed``
/// events of the same command.
public struct Blocked: Sendable, Hashable {
    public var blocker: UserID
    public var blocked: UserID
    public init(blocker: UserID, blocked: UserID) {
        self.blocker = blocker
        self.blocked = blocked
    }
}

/// `blockedAt`: the position of the block this lifts.
public struct Unblocked: Sendable, Hashable {
    public var blocker: UserID
    public var blocked: UserID
    public var blockedAt: LogPosition
    public init(blocker: UserID, blocked: UserID, blockedAt: LogPosition) {
        self.blocker = blocker
        self.blocked = blocked
        self.blockedAt = blockedAt
    }
}

/// `muter` no longer sees `muted`'s posts in feeds, nor notifications of what `muted` does.
public struct Muted: Sendable, Hashable {
    public var muter: UserID
    public var muted: UserID
    public init(muter: UserID, muted: UserID) {
        self.muter = muter
        self.muted = muted
    }
}

/// `mutedAt`: the position of the mute this lifts.
public struct Unmuted: Sendable, Hashable {
    public var muter: UserID
    public var muted: UserID
    public var mutedAt: LogPosition
    public init(muter: UserID, muted: UserID, mutedAt: LogPosition) {
        self.muter = muter
        self.muted = muted
        self.mutedAt = mutedAt
    }
}

/// What a report is about.
public enum ReportTarget: Sendable, Hashable {
    case post(PostID)
    case comment(PostID, CommentID)
    case user(UserID)
}

/// Why content is reported.
public enum ReportReason: String, Sendable, Hashable, CaseIterable {
    case spam, abuse, nudity, other
}

/// A user reported a post, a comment or a user to the admins. `targetAuthor`: whom the target is by (the user of a
/// user report), a fact of the decision, so that a suspension needs no look-up.
public struct ReportFiled: Sendable, Hashable {
    public var report: ReportID
    public var reporter: UserID
    public var target: ReportTarget
    public var targetAuthor: UserID
    public var reason: ReportReason
    public var details: String
    public init(
        report: ReportID, reporter: UserID, target: ReportTarget, targetAuthor: UserID, reason: ReportReason,
        details: String
    ) {
        self.report = report
        self.reporter = reporter
        self.target = target
        self.targetAuthor = targetAuthor
        self.reason = reason
        self.details = details
    }
}

/// How an admin resolved a report.
public enum ReportAction: String, Sendable, Hashable, CaseIterable {
    case dismiss
    case removeContent = "remove_content"
    case suspendUser = "suspend_user"
}

/// An admin resolved a report; what the action did are events of the same command (``PostDeleted``,
/// ``CommentDeleted``, ``UserSuspended``). `filedAt`: the position of the ``ReportFiled``.
public struct ReportResolved: Sendable, Hashable {
    public var report: ReportID
    public var action: ReportAction
    public var filedAt: LogPosition
    public init(report: ReportID, action: ReportAction, filedAt: LogPosition) {
        self.report = report
        self.action = action
        self.filedAt = filedAt
    }
}

/// An admin suspended a user: their sessions end (``SessionEnded`` events of the same command), they cannot sign in,
/// and what they wrote is hidden as if deleted, until ``UserUnsuspended``.
public struct UserSuspended: Sendable, Hashable {
    public var user: UserID
    public init(user: UserID) { self.user = user }
}

public struct UserUnsuspended: Sendable, Hashable {
    public var user: UserID
    public init(user: UserID) { self.user = user }
}

/// A user deleted their account. What went with it are events of the same command, before this one: a
/// ``PostDeleted`` for each of their posts, a ``CommentDeleted`` for each of their comments, an ``Unliked`` for each
/// like, an ``Unfollowed`` for each follow either way, a ``SessionEnded`` for each session. Their data key is destroyed
/// once this is appended, so that their personal fields in the log can no longer be read (crypto-shredding).
public struct AccountDeleted: Sendable, Hashable {
    public var user: UserID
    public init(user: UserID) { self.user = user }
}

/// Nothing readable of an erased user's personal data is left in any file of the data directory: their key is
/// destroyed, and every store that held their data in plain was compacted. Appended by the server, once per
/// ``AccountDeleted``.
public struct ErasureCompleted: Sendable, Hashable {
    public var user: UserID
    public init(user: UserID) { self.user = user }
}

extension DomainEvent {
    /// The aggregate the event belongs to: `user-…`, `post-…`, `room-…`, `report-…`, or `conversation-…` (the two user
    /// ids, sorted).
    public var stream: StreamID {
        let name =
            switch self {
            case .userRegistered(let event): "user-\(event.user)"
            case .profileEdited(let event): "user-\(event.user)"
            case .followed(let event): "user-\(event.follower)"
            case .unfollowed(let event): "user-\(event.follower)"
            case .postCreated(let event): "post-\(event.post)"
            case .postEdited(let event): "post-\(event.post)"
            case .postDeleted(let event): "post-\(event.post)"
            case .liked(let event): "post-\(event.post)"
            case .unliked(let event): "post-\(event.post)"
            case .reposted(let event): "post-\(event.post)"
            case .unreposted(let event): "post-\(event.post)"
            case .commentAdded(let event): "post-\(event.post)"
            case .commentDeleted(let event): "post-\(event.post)"
            case .messageSent(let event): "conversation-\(min(event.from, event.to))-\(max(event.from, event.to))"
            case .roomCreated(let event): "room-\(event.room)"
            case .roomJoined(let event): "room-\(event.room)"
            case .roomLeft(let event): "room-\(event.room)"
            case .roomMessageSent(let event): "room-\(event.room)"
            case .notificationsRead(let event): "user-\(event.user)"
            case .conversationRead(let event):
                "conversation-\(min(event.reader, event.partner))-\(max(event.reader, event.partner))"
            case .sessionStarted(let event): "user-\(event.user)"
            case .sessionEnded(let event): "user-\(event.user)"
            case .passwordChanged(let event): "user-\(event.user)"
            case .passwordResetRequested(let event): "user-\(event.user)"
            case .blocked(let event): "user-\(event.blocker)"
            case .unblocked(let event): "user-\(event.blocker)"
            case .muted(let event): "user-\(event.muter)"
            case .unmuted(let event): "user-\(event.muter)"
            case .reportFiled(let event): "report-\(event.report)"
            case .reportResolved(let event): "report-\(event.report)"
            case .userSuspended(let event): "user-\(event.user)"
            case .userUnsuspended(let event): "user-\(event.user)"
            case .accountDeleted(let event): "user-\(event.user)"
            case .erasureCompleted(let event): "user-\(event.user)"
            }
        // Ids are 26 characters of base32: every name here is a valid stream id.
        return StreamID(stringLiteral: name)
    }
}
