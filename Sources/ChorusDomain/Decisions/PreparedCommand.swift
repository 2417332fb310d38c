import ChorusLog

/// A command after everything that can be checked without the decision state: validated, normalised, new ids made,
/// password hashed, media looked up. What is left is decided inside the log writer's transaction.
struct PreparedCommand: Sendable {
    enum Decision: Sendable {
        case register(UserRegistered, SessionStarted)
        /// Becomes `startSession` once the executor has checked the password, outside the writer.
        case logIn(email: String, password: String, session: SessionID, expiresAt: EventTime)
        case startSession(SessionStarted)
        case logOut(UserID, SessionID)
        /// The new hash, and the stored hash the current password was checked against (filled in by the executor).
        case changePassword(user: UserID, keep: SessionID, newHash: String, checkedHash: String)
        case requestPasswordReset(emailKey: String, PasswordResetRequested)
        case resetPassword(user: UserID, reset: ResetID, newHash: String)
        case editProfile(ProfileEdited)
        case createPost(PostCreated)
        case editPost(PostEdited)
        case deletePost(UserID, PostID)
        case like(UserID, PostID)
        case unlike(UserID, PostID)
        case repost(UserID, PostID)
        case unrepost(UserID, PostID)
        case addComment(CommentAdded)
        case deleteComment(UserID, PostID, CommentID)
        case block(UserID, UserID)
        case unblock(UserID, UserID)
        case mute(UserID, UserID)
        case unmute(UserID, UserID)
        /// The event with its target and author filled in by the decision.
        case fileReport(ReportFiled, ReportSubject)
        case resolveReport(ReportID, ReportAction)
        case unsuspend(UserID)
        case follow(UserID, UserID)
        case unfollow(UserID, UserID)
        case sendMessage(MessageSent)
        case createRoom(RoomCreated)
        case joinRoom(UserID, RoomID)
        case leaveRoom(UserID, RoomID)
        case sendRoomMessage(RoomMessageSent)
        case readNotifications(UserID, LogPosition)
        case readConversation(UserID, UserID)
        /// The stored hash the password was checked against (filled in by the executor).
        case deleteAccount(UserID, checkedHash: String)
        case completeErasure(UserID)
    }

    /// Whom idempotency keys are scoped to: the user id, or for a registration, login or reset request the key of
    /// the e-mail it claims (``Validate/emailKey(_:)``).
    let caller: String
    var decision: Decision
    /// Identifies the request for idempotency keys: FNV-1a 64 of its normalised fields.
    let fingerprint: UInt64

    /// Who asks, as the log records it: the user id (a registration's new one); empty for a reset request, whose user
    /// only the decision finds. Never an e-mail key: the log keeps its records after an erasure, and a hash of an
    /// e-mail still tells whether that e-mail had an account.
    var actor: String {
        switch decision {
        case .register(let registered, _): registered.user.rawValue
        case .startSession(let started): started.user.rawValue
        case .logIn, .requestPasswordReset: ""
        default: caller
        }
    }
}

extension Command {
    /// Validates and normalises the command, makes the ids it creates, and hashes the password. Passwords are left
    /// out of the request fingerprint: it is stored, and a fast hash of a password must never be.
    func prepare(
        media: any MediaCatalog, hasher: PasswordHasher, now: EventTime = .now
    ) throws(DomainError) -> PreparedCommand {
        let sessionEnd = EventTime(
            millisecondsSince1970: now.millisecondsSince1970 + SessionStarted.lifetime.components.seconds * 1000)
        var canonical = PayloadWriter()
        let caller: String
        let decision: PreparedCommand.Decision
        switch self {
        case .registerUser(let email, let password, let name, let major, let bio):
            let email = try Validate.email(email)
            try Validate.password(password)
            let user = UserRegistered(
                user: .make(), email: email, passwordHash: "", name: try Validate.name(name),
                major: try Validate.profileField(major, field: "major", limit: FieldLimits.major, layout: .line),
                bio: try Validate.profileField(bio, field: "bio", limit: FieldLimits.bio, layout: .paragraphs))
            canonical.write(UInt8(1))
            for field in [user.email, user.name, user.major, user.bio] { canonical.write(field) }
            caller = Validate.emailKey(email)
            var hashed = user
            hashed.passwordHash = hasher.hash(password)
            decision = .register(hashed, SessionStarted(session: .make(), user: user.user, expiresAt: sessionEnd))
        case .logIn(let email, let password):
            let email = normalized(email)
            canonical.write(UInt8(10))
            canonical.write(email)
            caller = Validate.accountKey(forEmail: email)
            decision = .logIn(email: email, password: password, session: .make(), expiresAt: sessionEnd)
        case .logOut(let user, let session):
            canonical.write(UInt8(11))
            canonical.write(session)
            (caller, decision) = (user.rawValue, .logOut(user, session))
        case .changePassword(let user, let session, _, let newPassword):
            try Validate.password(newPassword)
            canonical.write(UInt8(15))
            canonical.write(session)
            caller = user.rawValue
            decision = .changePassword(user: user, keep: session, newHash: hasher.hash(newPassword), checkedHash: "")
        case .requestPasswordReset(let email):
            let email = normalized(email)
            canonical.write(UInt8(16))
            canonical.write(email)
            let expiresAt = EventTime(
                millisecondsSince1970: now.millisecondsSince1970 + PasswordResetRequested.lifetime.components.seconds
                    * 1000)
            // The user is found in the decision; until then, the request names an e-mail only.
            let reset = PasswordResetRequested(user: UserID(unchecked: ""), reset: .make(), expiresAt: expiresAt)
            let account = Validate.accountKey(forEmail: email)
            (caller, decision) = (account, .requestPasswordReset(emailKey: account, reset))
        case .resetPassword(let user, let reset, let newPassword):
            try Validate.password(newPassword)
            canonical.write(UInt8(17))
            canonical.write(reset)
            (caller, decision) = (
                user.rawValue, .resetPassword(user: user, reset: reset, newHash: hasher.hash(newPassword))
            )
        case .editProfile(let user, let name, let major, let bio, let profileImage):
            if case .set(let image)? = profileImage, !media.contains(image) {
                throw DomainError(.unknownMedia, "no media \(image)")
            }
            let edit = ProfileEdited(
                user: user, name: try name.map(Validate.name),
                major: try major.map { (text) throws(DomainError) in
                    try Validate.profileField(text, field: "major", limit: FieldLimits.major, layout: .line)
                },
                bio: try bio.map { (text) throws(DomainError) in
                    try Validate.profileField(text, field: "bio", limit: FieldLimits.bio, layout: .paragraphs)
                },
                profileImage: profileImage)
            canonical.write(UInt8(2))
            canonical.write(edit.name)
            canonical.write(edit.major)
            canonical.write(edit.bio)
            switch profileImage {
            case nil: canonical.write(UInt8(0))
            case .remove?: canonical.write(UInt8(1))
            case .set(let image)?: canonical.write(image.rawValue)
            }
            (caller, decision) = (user.rawValue, .editProfile(edit))
        case .createPost(let author, let caption, let text, let image, let repostOf):
            let caption = try Validate.optionalText(caption, field: "caption", limit: FieldLimits.caption)
            let text = try Validate.optionalText(text, field: "text", limit: FieldLimits.postText)
            guard !text.isEmpty || image != nil || repostOf != nil else {
                throw DomainError(.emptyText, "a post needs text, an image or a post to repost")
            }
            if let image, !media.contains(image) { throw DomainError(.unknownMedia, "no media \(image)") }
            canonical.write(UInt8(3))
            canonical.write(caption)
            canonical.write(text)
            canonical.write(image)
            canonical.write(repostOf)
            let post = PostCreated(
                post: .make(), author: author, caption: caption, text: text, image: image, repostOf: repostOf)
            (caller, decision) = (author.rawValue, .createPost(post))
        case .editPost(let author, let post, let caption, let text):
            let edit = PostEdited(
                post: post, author: author,
                caption: try caption.map { (caption) throws(DomainError) in
                    try Validate.optionalText(caption, field: "caption", limit: FieldLimits.caption)
                },
                text: try text.map { (text) throws(DomainError) in
                    try Validate.optionalText(text, field: "text", limit: FieldLimits.postText)
                })
            guard edit.caption != nil || edit.text != nil else {
                throw DomainError(.invalidField, "an edit changes the caption, the text or both")
            }
            canonical.write(UInt8(12))
            canonical.write(post)
            canonical.write(edit.caption)
            canonical.write(edit.text)
            (caller, decision) = (author.rawValue, .editPost(edit))
        case .deletePost(let author, let post):
            canonical.write(UInt8(13))
            canonical.write(post)
            (caller, decision) = (author.rawValue, .deletePost(author, post))
        case .like(let user, let post):
            canonical.write(UInt8(4))
            canonical.write(post)
            (caller, decision) = (user.rawValue, .like(user, post))
        case .unlike(let user, let post):
            canonical.write(UInt8(5))
            canonical.write(post)
            (caller, decision) = (user.rawValue, .unlike(user, post))
        case .repost(let user, let post):
            canonical.write(UInt8(27))
            canonical.write(post)
            (caller, decision) = (user.rawValue, .repost(user, post))
        case .unrepost(let user, let post):
            canonical.write(UInt8(28))
            canonical.write(post)
            (caller, decision) = (user.rawValue, .unrepost(user, post))
        case .addComment(let author, let post, let text):
            let text = try Validate.requiredText(text, field: "comment", limit: FieldLimits.comment)
            canonical.write(UInt8(6))
            canonical.write(post)
            canonical.write(text)
            let comment = CommentAdded(comment: .make(), post: post, author: author, text: text)
            (caller, decision) = (author.rawValue, .addComment(comment))
        case .deleteComment(let user, let post, let comment):
            canonical.write(UInt8(14))
            canonical.write(post)
            canonical.write(comment)
            (caller, decision) = (user.rawValue, .deleteComment(user, post, comment))
        case .block(let user, let other), .unblock(let user, let other), .mute(let user, let other),
            .unmute(let user, let other):
            guard user != other else { throw DomainError(.invalidField, "a user cannot block or mute themselves") }
            let (tag, chosen): (UInt8, PreparedCommand.Decision) =
                switch self {
                case .block: (18, .block(user, other))
                case .unblock: (19, .unblock(user, other))
                case .mute: (20, .mute(user, other))
                default: (21, .unmute(user, other))
                }
            canonical.write(tag)
            canonical.write(other)
            (caller, decision) = (user.rawValue, chosen)
        case .fileReport(let reporter, let subject, let reason, let details):
            let details = try Validate.optionalText(details, field: "details", limit: FieldLimits.comment)
            canonical.write(UInt8(22))
            switch subject {
            case .post(let post): canonical.write("post \(post)")
            case .comment(let comment): canonical.write("comment \(comment)")
            case .user(let user): canonical.write("user \(user)")
            }
            canonical.write(reason.rawValue)
            canonical.write(details)
            let report = ReportFiled(
                report: .make(), reporter: reporter, target: .user(reporter), targetAuthor: reporter, reason: reason,
                details: details)
            (caller, decision) = (reporter.rawValue, .fileReport(report, subject))
        case .resolveReport(let report, let action):
            canonical.write(UInt8(23))
            canonical.write(report)
            canonical.write(action.rawValue)
            (caller, decision) = (Self.adminActor, .resolveReport(report, action))
        case .unsuspend(let user):
            canonical.write(UInt8(24))
            canonical.write(user)
            (caller, decision) = (Self.adminActor, .unsuspend(user))
        case .follow(let follower, let followee):
            guard follower != followee else { throw DomainError(.selfFollow, "a user cannot follow themselves") }
            canonical.write(UInt8(7))
            canonical.write(followee)
            (caller, decision) = (follower.rawValue, .follow(follower, followee))
        case .unfollow(let follower, let followee):
            guard follower != followee else { throw DomainError(.selfFollow, "a user cannot unfollow themselves") }
            canonical.write(UInt8(8))
            canonical.write(followee)
            (caller, decision) = (follower.rawValue, .unfollow(follower, followee))
        case .sendMessage(let from, let to, let text):
            guard from != to else { throw DomainError(.selfMessage, "a user cannot message themselves") }
            let text = try Validate.requiredText(text, field: "message", limit: FieldLimits.message)
            canonical.write(UInt8(9))
            canonical.write(to)
            canonical.write(text)
            let message = MessageSent(message: .make(), from: from, to: to, text: text)
            (caller, decision) = (from.rawValue, .sendMessage(message))
        case .createRoom(let creator, let name):
            let name = try Validate.title(name, field: "name", limit: FieldLimits.roomName, invalid: .emptyText)
            guard !name.isEmpty else { throw DomainError(.emptyText, "name is empty") }
            canonical.write(UInt8(29))
            canonical.write(name)
            (caller, decision) = (
                creator.rawValue, .createRoom(RoomCreated(room: .make(), creator: creator, name: name))
            )
        case .joinRoom(let user, let room):
            canonical.write(UInt8(30))
            canonical.write(room)
            (caller, decision) = (user.rawValue, .joinRoom(user, room))
        case .leaveRoom(let user, let room):
            canonical.write(UInt8(31))
            canonical.write(room)
            (caller, decision) = (user.rawValue, .leaveRoom(user, room))
        case .sendRoomMessage(let from, let room, let text):
            let text = try Validate.requiredText(text, field: "message", limit: FieldLimits.message)
            canonical.write(UInt8(32))
            canonical.write(room)
            canonical.write(text)
            let message = RoomMessageSent(message: .make(), room: room, from: from, text: text)
            (caller, decision) = (from.rawValue, .sendRoomMessage(message))
        case .readNotifications(let user, let upTo):
            canonical.write(UInt8(33))
            canonical.write(Int64(bitPattern: upTo.rawValue))
            (caller, decision) = (user.rawValue, .readNotifications(user, upTo))
        case .readConversation(let reader, let partner):
            canonical.write(UInt8(34))
            canonical.write(partner)
            (caller, decision) = (reader.rawValue, .readConversation(reader, partner))
        case .deleteAccount(let user, _):
            canonical.write(UInt8(25))
            (caller, decision) = (user.rawValue, .deleteAccount(user, checkedHash: ""))
        case .completeErasure(let user):
            canonical.write(UInt8(26))
            canonical.write(user)
            (caller, decision) = (Self.adminActor, .completeErasure(user))
        }
        return PreparedCommand(caller: caller, decision: decision, fingerprint: fnv1a(canonical.bytes))
    }
}

private func fnv1a(_ bytes: [UInt8]) -> UInt64 {
    bytes.reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
}

extension Command {
    /// The actor of what admins do: no user id is ever this.
    static let adminActor = "admin"
}
