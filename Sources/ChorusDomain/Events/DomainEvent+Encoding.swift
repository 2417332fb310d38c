import ChorusLog

/// How domain events are stored in the log: a type name, the schema version of that type's payload, and the payload
/// in ``PayloadWriter``'s binary form. Decoding takes every schema version ever written to the current shape
/// (upcasting), so a log written by an older Chorus replays and projects unchanged.
///
/// Schema versions:
/// - `Liked`, `CommentAdded` 2: the post's author appended (version 1 without it: `postAuthor` nil).
/// - `Unliked` 2: the post's author and the position of the like appended (version 1: both nil).
/// - `Unfollowed` 2: the position of the follow appended (version 1: `followedAt` nil).
/// - `CommentAdded` 3, `UserRegistered`, `ProfileEdited`, `PostCreated`, `PostEdited`, `MessageSent` 2: the personal
///   fields (e-mail, name, major, bio, caption, text) sealed under their owner's data key (``SealedFields``), after the
///   fields that are not personal. Earlier versions hold them in plain; they decode as they are.
/// - `RoomMessageSent` 1 is sealed from the start (its text, as `MessageSent` 2's).
/// - every other type 1.
extension DomainEvent {
    /// The log's type name of the event.
    public var typeName: String { eventType.rawValue }

    /// The kind of event it is, as the log names it.
    var eventType: EventType {
        switch self {
        case .userRegistered: .userRegistered
        case .profileEdited: .profileEdited
        case .postCreated: .postCreated
        case .postEdited: .postEdited
        case .postDeleted: .postDeleted
        case .liked: .liked
        case .unliked: .unliked
        case .reposted: .reposted
        case .unreposted: .unreposted
        case .commentAdded: .commentAdded
        case .commentDeleted: .commentDeleted
        case .followed: .followed
        case .unfollowed: .unfollowed
        case .messageSent: .messageSent
        case .roomCreated: .roomCreated
        case .roomJoined: .roomJoined
        case .roomLeft: .roomLeft
        case .roomMessageSent: .roomMessageSent
        case .notificationsRead: .notificationsRead
        case .conversationRead: .conversationRead
        case .sessionStarted: .sessionStarted
        case .sessionEnded: .sessionEnded
        case .passwordChanged: .passwordChanged
        case .passwordResetRequested: .passwordResetRequested
        case .passwordResetUnmatched: .passwordResetUnmatched
        case .blocked: .blocked
        case .unblocked: .unblocked
        case .muted: .muted
        case .unmuted: .unmuted
        case .reportFiled: .reportFiled
        case .reportResolved: .reportResolved
        case .userSuspended: .userSuspended
        case .userUnsuspended: .userUnsuspended
        case .accountDeleted: .accountDeleted
        case .erasureCompleted: .erasureCompleted
        }
    }

    /// The schema version each type is written with now; 1 for a name no Chorus wrote.
    public static func currentSchemaVersion(ofType type: String) -> UInt16 {
        EventType(storedName: type)?.currentSchemaVersion ?? 1
    }

    /// The event as the log stores it, its personal fields sealed under their owner's key in `keys`.
    public func encoded(keys: any PersonalDataKeys) throws -> NewEvent {
        var writer = PayloadWriter()
        let type = typeName
        /// Seals what `fields` writes under `owner`'s key, into the payload.
        func sealed(_ owner: UserID, _ fields: (inout PayloadWriter) -> Void) throws {
            writer.write(bytes: try SealedFields.seal(owner: owner, type: type, keys: keys, fields))
        }
        switch self {
        case .userRegistered(let event):
            writer.write(event.user)
            writer.write(event.passwordHash)
            try sealed(event.user) {
                $0.write(event.email)
                $0.write(event.name)
                $0.write(event.major)
                $0.write(event.bio)
            }
        case .profileEdited(let event):
            writer.write(event.user)
            try sealed(event.user) {
                $0.write(event.name)
                $0.write(event.major)
                $0.write(event.bio)
            }
            switch event.profileImage {
            case nil: writer.write(UInt8(0))
            case .remove?: writer.write(UInt8(1))
            case .set(let media)?:
                writer.write(UInt8(2))
                writer.write(media)
            }
        case .postCreated(let event):
            writer.write(event.post)
            writer.write(event.author)
            writer.write(event.image)
            writer.write(event.repostOf)
            try sealed(event.author) {
                $0.write(event.caption)
                $0.write(event.text)
            }
        case .postEdited(let event):
            writer.write(event.post)
            writer.write(event.author)
            try sealed(event.author) {
                $0.write(event.caption)
                $0.write(event.text)
            }
        case .postDeleted(let event):
            writer.write(event.post)
            writer.write(event.author)
            writer.write(event.postedAt.rawValue)
            writer.write(event.repostOf)
        case .liked(let event):
            writer.write(event.user)
            writer.write(event.post)
            writer.write(event.postAuthor)
        case .unliked(let event):
            writer.write(event.user)
            writer.write(event.post)
            writer.write(event.postAuthor)
            writer.write(event.likedAt)
        case .reposted(let event):
            writer.write(event.user)
            writer.write(event.post)
            writer.write(event.postAuthor)
        case .unreposted(let event):
            writer.write(event.user)
            writer.write(event.post)
            writer.write(event.postAuthor)
            writer.write(event.repostedAt.rawValue)
        case .commentAdded(let event):
            writer.write(event.comment)
            writer.write(event.post)
            writer.write(event.author)
            writer.write(event.postAuthor)
            try sealed(event.author) { $0.write(event.text) }
        case .commentDeleted(let event):
            writer.write(event.comment)
            writer.write(event.post)
            writer.write(event.author)
            writer.write(event.postAuthor)
            writer.write(event.commentedAt.rawValue)
        case .followed(let event):
            writer.write(event.follower)
            writer.write(event.followee)
        case .unfollowed(let event):
            writer.write(event.follower)
            writer.write(event.followee)
            writer.write(event.followedAt)
        case .messageSent(let event):
            writer.write(event.message)
            writer.write(event.from)
            writer.write(event.to)
            try sealed(event.from) { $0.write(event.text) }
        case .roomCreated(let event):
            writer.write(event.room)
            writer.write(event.creator)
            writer.write(event.name)
        case .roomJoined(let event):
            writer.write(event.room)
            writer.write(event.user)
        case .roomLeft(let event):
            writer.write(event.room)
            writer.write(event.user)
            writer.write(event.joinedAt.rawValue)
        case .roomMessageSent(let event):
            writer.write(event.message)
            writer.write(event.room)
            writer.write(event.from)
            try sealed(event.from) { $0.write(event.text) }
        case .notificationsRead(let event):
            writer.write(event.user)
            writer.write(event.upTo.rawValue)
        case .conversationRead(let event):
            writer.write(event.reader)
            writer.write(event.partner)
        case .sessionStarted(let event):
            writer.write(event.session)
            writer.write(event.user)
            writer.write(Int64(event.expiresAt.millisecondsSince1970))
        case .sessionEnded(let event):
            writer.write(event.session)
            writer.write(event.user)
        case .passwordChanged(let event):
            writer.write(event.user)
            writer.write(event.passwordHash)
            writer.write(Int64(event.revokedResets.count))
            for reset in event.revokedResets { writer.write(reset) }
        case .passwordResetRequested(let event):
            writer.write(event.user)
            writer.write(event.reset)
            writer.write(event.expiresAt.millisecondsSince1970)
        case .passwordResetUnmatched:
            break
        case .blocked(let event):
            writer.write(event.blocker)
            writer.write(event.blocked)
        case .unblocked(let event):
            writer.write(event.blocker)
            writer.write(event.blocked)
            writer.write(event.blockedAt.rawValue)
        case .muted(let event):
            writer.write(event.muter)
            writer.write(event.muted)
        case .unmuted(let event):
            writer.write(event.muter)
            writer.write(event.muted)
            writer.write(event.mutedAt.rawValue)
        case .reportFiled(let event):
            writer.write(event.report)
            writer.write(event.reporter)
            writer.write(event.target)
            writer.write(event.targetAuthor)
            writer.write(event.reason.rawValue)
            writer.write(event.details)
        case .reportResolved(let event):
            writer.write(event.report)
            writer.write(event.action.rawValue)
            writer.write(event.filedAt.rawValue)
        case .userSuspended(let event):
            writer.write(event.user)
        case .userUnsuspended(let event):
            writer.write(event.user)
        case .accountDeleted(let event):
            writer.write(event.user)
        case .erasureCompleted(let event):
            writer.write(event.user)
        }
        return NewEvent(type: typeName, schemaVersion: eventType.currentSchemaVersion, payload: writer.bytes)
    }
}

extension PayloadWriter {
    /// A report's target: a kind byte (1 post, 2 comment, 3 user), then its ids.
    public mutating func write(_ target: ReportTarget) {
        switch target {
        case .post(let post):
            write(UInt8(1))
            write(post)
        case .comment(let post, let comment):
            write(UInt8(2))
            write(post)
            write(comment)
        case .user(let user):
            write(UInt8(3))
            write(user)
        }
    }
}
