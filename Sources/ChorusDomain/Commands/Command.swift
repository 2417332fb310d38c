import ChorusLog

/// What a user asks Chorus to do. Text is validated and normalised by ``CommandExecutor`` (NFC, trimmed, the contract's
/// limits) before anything is decided. A new command is a case here and its line in `prepare` below; its preparation
/// and decision live in its feature's folder.
public enum Command: Sendable, Hashable {
    /// Signs up, and signs the new user in: the result carries the session. Without a handle, the account gets one made
    /// from its name (``Handles/candidates(name:user:)``).
    case registerUser(
        email: String, password: String, name: String, major: String? = nil, bio: String? = nil, handle: String? = nil)
    /// Checks the password, then starts a session (``DomainError/Code/invalidCredentials`` otherwise).
    case logIn(email: String, password: String)
    /// Ends one of the user's sessions, and forgets `device` if it is one of theirs; ending one that has ended
    /// changes nothing.
    case logOut(user: UserID, session: SessionID, device: DeviceID? = nil)
    /// Changes the password (``DomainError/Code/wrongPassword`` unless `currentPassword` is right) and ends every
    /// other session of the user; `session`, the one asking, goes on.
    case changePassword(user: UserID, session: SessionID, currentPassword: String, newPassword: String)
    /// Opens a password reset for the account with this e-mail, if there is one (nothing happens otherwise, and the
    /// result does not say which): its token goes out through the `password_reset.requested` webhook.
    case requestPasswordReset(email: String)
    /// Sets a new password with the reset a token was made for (``SessionTokens/reset(fromToken:)``), once, before it
    /// expires (``DomainError/Code/invalidToken`` otherwise), and ends every session of the user.
    case resetPassword(user: UserID, reset: ResetID, newPassword: String)
    /// Changes the fields given; `isPrivate: false` also accepts every pending follow request.
    case editProfile(
        user: UserID, name: String? = nil, major: String? = nil, bio: String? = nil,
        profileImage: ProfileImageChange? = nil, handle: String? = nil, isPrivate: Bool? = nil)
    /// A post with up to four images (``PostCreated/maximumImages``), each with an optional alt text; `replies` says
    /// who may comment.
    case createPost(
        author: UserID, caption: String? = nil, text: String? = nil, media: [PostImage] = [], repostOf: PostID? = nil,
        replies: ReplyPolicy = .everyone)
    /// Changes the caption, the text, the alt texts or who may comment of one's own post
    /// (``DomainError/Code/forbidden`` for another's); nil leaves a field as it is. `media` names the post's images, in
    /// their order, with their new alt texts.
    case editPost(
        author: UserID, post: PostID, caption: String? = nil, text: String? = nil, media: [PostImage]? = nil,
        replies: ReplyPolicy? = nil)
    /// Deletes one's own post (``DomainError/Code/forbidden`` for another's), and with it its plain reposts; deleting
    /// it again changes nothing.
    case deletePost(author: UserID, post: PostID)
    case like(user: UserID, post: PostID)
    case unlike(user: UserID, post: PostID)
    /// Saves a post for later, seen by the user alone (repeats change nothing).
    case bookmark(user: UserID, post: PostID)
    /// Takes a bookmark back (repeats change nothing), also of a post deleted since.
    case unbookmark(user: UserID, post: PostID)
    /// Mutes a word or phrase for `user` (at most 100), until `expiresAt` if given; the result's id names it.
    case muteWord(user: UserID, word: String, expiresAt: EventTime? = nil, scope: MutedWordScope = .everyone)
    /// Takes a muted word back.
    case unmuteWord(user: UserID, id: MutedWordID)
    /// Reposts a post plainly (repeats change nothing): naming a plain repost reposts its original.
    case repost(user: UserID, post: PostID)
    /// Takes a plain repost back (repeats change nothing).
    case unrepost(user: UserID, post: PostID)
    case addComment(author: UserID, post: PostID, text: String)
    /// Deletes a comment on `post`: its author may, and so may the post's author. Deleting it again changes nothing.
    case deleteComment(user: UserID, post: PostID, comment: CommentID)
    /// Blocks `blocked` (repeats change nothing): the follows between the two end, and neither can follow, like,
    /// comment on, repost or message the other (``DomainError/Code/blocked``).
    case block(blocker: UserID, blocked: UserID)
    case unblock(blocker: UserID, blocked: UserID)
    /// Hides `muted`'s posts and notifications from `muter` (repeats change nothing).
    case mute(muter: UserID, muted: UserID)
    case unmute(muter: UserID, muted: UserID)
    /// Reports a post, a comment or a user to the admins; `details` at most 1,000 characters.
    case fileReport(reporter: UserID, subject: ReportSubject, reason: ReportReason, details: String? = nil)
    /// An admin resolves a report: dismissed, its content deleted, or its content's author suspended. A report
    /// resolved already changes nothing.
    case resolveReport(report: ReportID, action: ReportAction)
    /// An admin suspends a user: their sessions end, they cannot sign in, and what they wrote is hidden, until
    /// ``unsuspend(user:)``. Suspending a suspended user changes nothing.
    case suspend(user: UserID)
    /// An admin lifts a suspension.
    case unsuspend(user: UserID)
    /// Follows a user, or asks to when their account is private (the request waits for their answer).
    case follow(follower: UserID, followee: UserID)
    /// Unfollows a user, or withdraws the request to follow them.
    case unfollow(follower: UserID, followee: UserID)
    /// A private account accepts a pending request to follow it (``DomainError/Code/notFound`` if there is none).
    case acceptFollowRequest(followee: UserID, follower: UserID)
    /// A private account declines a pending request to follow it (likewise).
    case declineFollowRequest(followee: UserID, follower: UserID)
    case sendMessage(from: UserID, to: UserID, text: String)
    /// Marks the user's notifications read up to the one made at `upTo` (a notification's id names it); marking up
    /// to an earlier one changes nothing.
    case readNotifications(user: UserID, upTo: LogPosition)
    /// Marks the user's conversation with `partner` read, up to now; with nothing new since the last time, nothing
    /// changes.
    case readConversation(reader: UserID, partner: UserID)
    /// Makes a room (its name 1–100 characters) and joins its creator to it.
    case createRoom(creator: UserID, name: String)
    /// Joins a room (repeats change nothing); any user may join any room.
    case joinRoom(user: UserID, room: RoomID)
    /// Leaves a room (repeats change nothing).
    case leaveRoom(user: UserID, room: RoomID)
    /// A message to a room's members, by one of them (``DomainError/Code/forbidden`` for anyone else).
    case sendRoomMessage(from: UserID, room: RoomID, text: String)
    /// Deletes the account (``DomainError/Code/wrongPassword`` unless `password` is right), with everything it wrote
    /// and every relation it had (see ``AccountDeleted``); its data key is destroyed once that is appended.
    case deleteAccount(user: UserID, password: String)
    /// Registers a phone's push token (``RegisterDevice``); the result's `createdID` is the device's id, new or not.
    case registerDevice(
        user: UserID, platform: PushPlatform, token: String, environment: PushEnvironment? = nil, locale: String? = nil)
    /// Forgets one of the user's devices (``DomainError/Code/notFound`` for another's, or none).
    case forgetDevice(user: UserID, device: DeviceID)
    /// Forgets a device whose token APNs or FCM refused for good; nothing when it is gone already (its user forgot it,
    /// or its token moved to another account).
    case forgetRefusedDevice(user: UserID, device: DeviceID)
    /// Sets what the user gets pushes about, kind by kind; kinds left out stay as they are.
    case changePushSettings(user: UserID, changes: [PushKind: PushLevel])
    /// The server records that nothing readable of a deleted account's personal data is left in its files. Repeats
    /// change nothing.
    case completeErasure(user: UserID)
}

extension Command {
    /// The actor of what admins do: no user id is ever this.
    static let adminActor = "admin"

    /// Validates and normalises the command, makes the ids it creates, and hashes the password: each command's
    /// preparation lives beside its decision, in its feature's folder.
    func prepare(
        media: any MediaCatalog, hasher: PasswordHasher, now: EventTime = .now
    ) throws(DomainError) -> PreparedCommand {
        let context = CommandPreparation(media: media, hasher: hasher, now: now)
        return switch self {
        case .registerUser(let email, let password, let name, let major, let bio, let handle):
            try RegisterUser.prepare(
                email: email, password: password, name: name, major: major, bio: bio, handle: handle, context)
        case .logIn(let email, let password): LogIn.prepare(email: email, password: password, context)
        case .logOut(let user, let session, let device): LogOut.prepare(user: user, session: session, device: device)
        case .changePassword(let user, let session, _, let newPassword):
            try ChangePassword.prepare(user: user, keeping: session, newPassword: newPassword, context)
        case .requestPasswordReset(let email): RequestPasswordReset.prepare(email: email, context)
        case .resetPassword(let user, let reset, let newPassword):
            try ResetPassword.prepare(user: user, reset: reset, newPassword: newPassword, context)
        case .editProfile(let user, let name, let major, let bio, let image, let handle, let isPrivate):
            try EditProfile.prepare(
                user: user, name: name, major: major, bio: bio, image: image, handle: handle, isPrivate: isPrivate,
                context)
        case .deleteAccount(let user, _): DeleteAccount.prepare(user: user)
        case .completeErasure(let user): CompleteErasure.prepare(user: user)
        case .createPost(let author, let caption, let text, let media, let repostOf, let replies):
            try CreatePost.prepare(
                author: author, caption: caption, text: text, media: media, repostOf: repostOf, replies: replies,
                context)
        case .editPost(let author, let post, let caption, let text, let media, let replies):
            try EditPost.prepare(
                author: author, post: post, caption: caption, text: text, media: media, replies: replies)
        case .deletePost(let author, let post): DeletePost.prepare(author: author, post: post)
        case .like(let user, let post): LikePost.prepare(user: user, post: post)
        case .unlike(let user, let post): UnlikePost.prepare(user: user, post: post)
        case .bookmark(let user, let post): BookmarkPost.prepare(user: user, post: post)
        case .unbookmark(let user, let post): UnbookmarkPost.prepare(user: user, post: post)
        case .muteWord(let user, let word, let expiresAt, let scope):
            try MuteWord.prepare(user: user, word: word, expiresAt: expiresAt, scope: scope)
        case .unmuteWord(let user, let id): UnmuteWord.prepare(user: user, id: id)
        case .repost(let user, let post): RepostPost.prepare(user: user, post: post)
        case .unrepost(let user, let post): UnrepostPost.prepare(user: user, post: post)
        case .addComment(let author, let post, let text): try AddComment.prepare(author: author, post: post, text: text)
        case .deleteComment(let user, let post, let comment):
            DeleteComment.prepare(user: user, post: post, comment: comment)
        case .follow(let follower, let followee): try Follow.prepare(follower: follower, followee: followee)
        case .unfollow(let follower, let followee): try Unfollow.prepare(follower: follower, followee: followee)
        case .acceptFollowRequest(let followee, let follower):
            AnswerFollowRequest.prepare(followee: followee, follower: follower, accept: true)
        case .declineFollowRequest(let followee, let follower):
            AnswerFollowRequest.prepare(followee: followee, follower: follower, accept: false)
        case .block(let blocker, let blocked): try Block.prepare(blocker: blocker, blocked: blocked)
        case .unblock(let blocker, let blocked): try Unblock.prepare(blocker: blocker, blocked: blocked)
        case .mute(let muter, let muted): try Mute.prepare(muter: muter, muted: muted)
        case .unmute(let muter, let muted): try Unmute.prepare(muter: muter, muted: muted)
        case .sendMessage(let from, let to, let text): try SendMessage.prepare(from: from, to: to, text: text)
        case .readNotifications(let user, let upTo): ReadNotifications.prepare(user: user, upTo: upTo)
        case .readConversation(let reader, let partner): ReadConversation.prepare(reader: reader, partner: partner)
        case .createRoom(let creator, let name): try CreateRoom.prepare(creator: creator, name: name)
        case .joinRoom(let user, let room): JoinRoom.prepare(user: user, room: room)
        case .leaveRoom(let user, let room): LeaveRoom.prepare(user: user, room: room)
        case .sendRoomMessage(let from, let room, let text):
            try SendRoomMessage.prepare(from: from, room: room, text: text)
        case .fileReport(let reporter, let subject, let reason, let details):
            try FileReport.prepare(reporter: reporter, subject: subject, reason: reason, details: details)
        case .resolveReport(let report, let action): ResolveReport.prepare(report: report, action: action)
        case .suspend(let user): Suspend.prepare(user: user)
        case .unsuspend(let user): Unsuspend.prepare(user: user)
        case .registerDevice(let user, let platform, let token, let environment, let locale):
            try RegisterDevice.prepare(
                user: user, platform: platform, token: token, environment: environment, locale: locale)
        case .forgetDevice(let user, let device): ForgetDevice.prepare(user: user, device: device, reason: .byUser)
        case .forgetRefusedDevice(let user, let device):
            ForgetDevice.prepare(user: user, device: device, reason: .refusedByProvider)
        case .changePushSettings(let user, let changes): ChangePushSettings.prepare(user: user, changes: changes)
        }
    }
}

/// What a command did.
public struct CommandResult: Sendable, Hashable {
    /// The position of the last event it appended; for a command that changed nothing (a second like, an idempotent
    /// replay) the head of the log when it was decided, so that reading at this position shows its effect.
    public let position: LogPosition
    /// False when nothing was appended.
    public let appended: Bool
    /// The id of the user, post, comment or message it created.
    public let createdID: String?
    /// The session a registration or login started: ``SessionTokens`` turns its id into the bearer token.
    public let session: SessionStarted?

    public init(position: LogPosition, appended: Bool, createdID: String?, session: SessionStarted? = nil) {
        self.position = position
        self.appended = appended
        self.createdID = createdID
        self.session = session
    }
}

/// Whether a media id names stored media that a user uploaded; the media store answers (media bytes are not events).
/// A post or a profile shows only its own user's uploads, as Mastodon has it: an image is sealed under its uploader's
/// key, and goes with their erasure.
public protocol MediaCatalog: Sendable {
    func contains(_ media: MediaID, uploadedBy user: UserID) -> Bool
}

/// What a report names: a post, a comment (its post is found), or a user.
public enum ReportSubject: Sendable, Hashable {
    case post(PostID)
    case comment(CommentID)
    case user(UserID)
}
