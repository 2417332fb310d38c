import ChorusLog

/// A command after everything that can be checked without the decision state: validated, normalised, new ids made,
/// password hashed, media looked up. What is left, its ``Decision``, is decided inside the log writer's transaction.
struct PreparedCommand: Sendable {
    /// Whom idempotency keys are scoped to: the user id, or for a registration, login or reset request the key of
    /// the e-mail it claims (``Validate/emailKey(_:)``).
    let caller: String
    var decision: any Decision
    /// Identifies the request for idempotency keys: FNV-1a 64 of its normalised fields.
    let fingerprint: UInt64
    /// Who asks, as the log records it: the user id (a registration's new one); empty for a login or reset request
    /// until the user is known. Never an e-mail key: the log keeps its records after an erasure, and a hash of an
    /// e-mail still tells whether that e-mail had an account.
    var actor: String

    /// A command of `caller` (the actor too, unless said), identified by `tag` and what `fields` writes. Passwords
    /// are never among the fields: the fingerprint is stored, and a fast hash of a password must never be.
    init(
        caller: String, actor: String? = nil, tag: UInt8, fields: (inout PayloadWriter) -> Void = { _ in },
        decision: any Decision
    ) {
        var canonical = PayloadWriter()
        canonical.write(tag)
        fields(&canonical)
        self.caller = caller
        self.actor = actor ?? caller
        self.decision = decision
        self.fingerprint = canonical.bytes.reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
    }
}

/// What preparing a command may use: the media store, the password hasher, and the time it is prepared at.
struct CommandPreparation {
    let media: any MediaCatalog
    let hasher: PasswordHasher
    let now: EventTime

    /// When a session started now ends.
    var sessionEnd: EventTime { now.adding(SessionStarted.lifetime) }
}

extension EventTime {
    func adding(_ duration: Duration) -> EventTime {
        EventTime(millisecondsSince1970: millisecondsSince1970 + duration.components.seconds * 1000)
    }
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
        case .registerUser(let email, let password, let name, let major, let bio):
            try RegisterUser.prepare(email: email, password: password, name: name, major: major, bio: bio, context)
        case .logIn(let email, let password): LogIn.prepare(email: email, password: password, context)
        case .logOut(let user, let session): LogOut.prepare(user: user, session: session)
        case .changePassword(let user, let session, _, let newPassword):
            try ChangePassword.prepare(user: user, keeping: session, newPassword: newPassword, context)
        case .requestPasswordReset(let email): RequestPasswordReset.prepare(email: email, context)
        case .resetPassword(let user, let reset, let newPassword):
            try ResetPassword.prepare(user: user, reset: reset, newPassword: newPassword, context)
        case .editProfile(let user, let name, let major, let bio, let image):
            try EditProfile.prepare(user: user, name: name, major: major, bio: bio, image: image, context)
        case .deleteAccount(let user, _): DeleteAccount.prepare(user: user)
        case .completeErasure(let user): CompleteErasure.prepare(user: user)
        case .createPost(let author, let caption, let text, let image, let repostOf):
            try CreatePost.prepare(
                author: author, caption: caption, text: text, image: image, repostOf: repostOf, context)
        case .editPost(let author, let post, let caption, let text):
            try EditPost.prepare(author: author, post: post, caption: caption, text: text)
        case .deletePost(let author, let post): DeletePost.prepare(author: author, post: post)
        case .like(let user, let post): LikePost.prepare(user: user, post: post)
        case .unlike(let user, let post): UnlikePost.prepare(user: user, post: post)
        case .repost(let user, let post): RepostPost.prepare(user: user, post: post)
        case .unrepost(let user, let post): UnrepostPost.prepare(user: user, post: post)
        case .addComment(let author, let post, let text): try AddComment.prepare(author: author, post: post, text: text)
        case .deleteComment(let user, let post, let comment):
            DeleteComment.prepare(user: user, post: post, comment: comment)
        case .follow(let follower, let followee): try Follow.prepare(follower: follower, followee: followee)
        case .unfollow(let follower, let followee): try Unfollow.prepare(follower: follower, followee: followee)
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
        case .unsuspend(let user): Unsuspend.prepare(user: user)
        }
    }
}
