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
/// - every other type 1.
extension DomainEvent {
    /// The log's type name of the event.
    public var typeName: String {
        switch self {
        case .userRegistered: "UserRegistered"
        case .profileEdited: "ProfileEdited"
        case .postCreated: "PostCreated"
        case .postEdited: "PostEdited"
        case .postDeleted: "PostDeleted"
        case .liked: "Liked"
        case .unliked: "Unliked"
        case .commentAdded: "CommentAdded"
        case .commentDeleted: "CommentDeleted"
        case .followed: "Followed"
        case .unfollowed: "Unfollowed"
        case .messageSent: "MessageSent"
        case .sessionStarted: "SessionStarted"
        case .sessionEnded: "SessionEnded"
        case .passwordChanged: "PasswordChanged"
        case .passwordResetRequested: "PasswordResetRequested"
        case .blocked: "Blocked"
        case .unblocked: "Unblocked"
        case .muted: "Muted"
        case .unmuted: "Unmuted"
        case .reportFiled: "ReportFiled"
        case .reportResolved: "ReportResolved"
        case .userSuspended: "UserSuspended"
        case .userUnsuspended: "UserUnsuspended"
        case .accountDeleted: "AccountDeleted"
        case .erasureCompleted: "ErasureCompleted"
        }
    }

    /// The schema version each type is written with now.
    public static func currentSchemaVersion(ofType type: String) -> UInt16 {
        switch type {
        case "CommentAdded": 3
        case "Liked", "Unliked", "Unfollowed", "UserRegistered", "ProfileEdited", "PostCreated", "PostEdited",
            "MessageSent":
            2
        default: 1
        }
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
        return NewEvent(
            type: typeName, schemaVersion: Self.currentSchemaVersion(ofType: typeName), payload: writer.bytes)
    }

    /// Decodes a stored event, opening its personal fields with their owner's key in `keys`; an erased user's read as
    /// empty. Throws ``DomainEventDecodingError`` for an unknown type or version, a bad payload, or a missing key.
    public init(decoding event: RecordedEvent, keys: any PersonalDataKeys) throws {
        let version = event.schemaVersion
        guard (1...Self.currentSchemaVersion(ofType: event.type)).contains(version) else {
            throw DomainEventDecodingError(event: event, reason: "unknown schema version \(version)")
        }
        var reader = PayloadReader(event.payload)
        /// What version 2 of likes, unlikes, comments and unfollows added; nil in version 1.
        func postAuthor() throws -> UserID? { version >= 2 ? try reader.readOptional(UserID.self) : nil }
        func position() throws -> LogPosition? { version >= 2 ? try reader.readOptionalPosition() : nil }
        /// Whether this type's version seals its personal fields.
        let isSealed = version >= (event.type == "CommentAdded" ? 3 : 2)
        /// The reader of `owner`'s sealed fields; nil when the owner was erased.
        func opened(_ owner: UserID) throws -> PayloadReader? {
            try SealedFields.open(try reader.readBytes(), owner: owner, type: event.type, keys: keys)
        }
        do {
            switch event.type {
            case "UserRegistered" where isSealed:
                let user = try reader.read(UserID.self)
                let hash = try reader.readString()
                var fields = try opened(user)
                self = .userRegistered(
                    UserRegistered(
                        user: user, email: try fields?.readString() ?? "", passwordHash: hash,
                        name: try fields?.readString() ?? "", major: try fields?.readString() ?? "",
                        bio: try fields?.readString() ?? ""))
                try fields?.finish()
            case "UserRegistered":
                self = .userRegistered(
                    UserRegistered(
                        user: try reader.read(UserID.self), email: try reader.readString(),
                        passwordHash: try reader.readString(), name: try reader.readString(),
                        major: try reader.readString(), bio: try reader.readString()))
            case "ProfileEdited":
                let user = try reader.read(UserID.self)
                let name: String?
                let major: String?
                let bio: String?
                if isSealed {
                    var fields = try opened(user)
                    (name, major, bio) = (
                        try fields?.readOptionalString(), try fields?.readOptionalString(),
                        try fields?.readOptionalString()
                    )
                    try fields?.finish()
                } else {
                    (name, major, bio) = (
                        try reader.readOptionalString(), try reader.readOptionalString(),
                        try reader.readOptionalString()
                    )
                }
                let image: ProfileImageChange? =
                    switch try reader.readByte() {
                    case 0: nil
                    case 1: .remove
                    case 2: .set(try reader.read(MediaID.self))
                    case let flag: throw PayloadError.badFlag(flag)
                    }
                self = .profileEdited(
                    ProfileEdited(user: user, name: name, major: major, bio: bio, profileImage: image))
            case "PostCreated" where isSealed:
                let post = try reader.read(PostID.self)
                let author = try reader.read(UserID.self)
                let image = try reader.readOptional(MediaID.self)
                let repostOf = try reader.readOptional(PostID.self)
                var fields = try opened(author)
                self = .postCreated(
                    PostCreated(
                        post: post, author: author, caption: try fields?.readString() ?? "",
                        text: try fields?.readString() ?? "", image: image, repostOf: repostOf))
                try fields?.finish()
            case "PostCreated":
                self = .postCreated(
                    PostCreated(
                        post: try reader.read(PostID.self), author: try reader.read(UserID.self),
                        caption: try reader.readString(), text: try reader.readString(),
                        image: try reader.readOptional(MediaID.self), repostOf: try reader.readOptional(PostID.self)))
            case "PostEdited" where isSealed:
                let post = try reader.read(PostID.self)
                let author = try reader.read(UserID.self)
                var fields = try opened(author)
                self = .postEdited(
                    PostEdited(
                        post: post, author: author, caption: try fields?.readOptionalString(),
                        text: try fields?.readOptionalString()))
                try fields?.finish()
            case "PostEdited":
                self = .postEdited(
                    PostEdited(
                        post: try reader.read(PostID.self), author: try reader.read(UserID.self),
                        caption: try reader.readOptionalString(), text: try reader.readOptionalString()))
            case "PostDeleted":
                self = .postDeleted(
                    PostDeleted(
                        post: try reader.read(PostID.self), author: try reader.read(UserID.self),
                        postedAt: LogPosition(try reader.readUInt64()), repostOf: try reader.readOptional(PostID.self)))
            case "Liked":
                self = .liked(
                    Liked(
                        user: try reader.read(UserID.self), post: try reader.read(PostID.self),
                        postAuthor: try postAuthor()))
            case "Unliked":
                self = .unliked(
                    Unliked(
                        user: try reader.read(UserID.self), post: try reader.read(PostID.self),
                        postAuthor: try postAuthor(),
                        likedAt: try position()))
            case "CommentAdded" where isSealed:
                let comment = try reader.read(CommentID.self)
                let post = try reader.read(PostID.self)
                let author = try reader.read(UserID.self)
                let postAuthor = try reader.readOptional(UserID.self)
                var fields = try opened(author)
                self = .commentAdded(
                    CommentAdded(
                        comment: comment, post: post, author: author, text: try fields?.readString() ?? "",
                        postAuthor: postAuthor))
                try fields?.finish()
            case "CommentAdded":
                self = .commentAdded(
                    CommentAdded(
                        comment: try reader.read(CommentID.self), post: try reader.read(PostID.self),
                        author: try reader.read(UserID.self), text: try reader.readString(),
                        postAuthor: try postAuthor()))
            case "CommentDeleted":
                self = .commentDeleted(
                    CommentDeleted(
                        comment: try reader.read(CommentID.self), post: try reader.read(PostID.self),
                        author: try reader.read(UserID.self), postAuthor: try reader.read(UserID.self),
                        commentedAt: LogPosition(try reader.readUInt64())))
            case "Followed":
                self = .followed(
                    Followed(follower: try reader.read(UserID.self), followee: try reader.read(UserID.self)))
            case "Unfollowed":
                self = .unfollowed(
                    Unfollowed(
                        follower: try reader.read(UserID.self), followee: try reader.read(UserID.self),
                        followedAt: try position()))
            case "MessageSent" where isSealed:
                let message = try reader.read(MessageID.self)
                let from = try reader.read(UserID.self)
                let to = try reader.read(UserID.self)
                var fields = try opened(from)
                self = .messageSent(
                    MessageSent(message: message, from: from, to: to, text: try fields?.readString() ?? ""))
                try fields?.finish()
            case "MessageSent":
                self = .messageSent(
                    MessageSent(
                        message: try reader.read(MessageID.self), from: try reader.read(UserID.self),
                        to: try reader.read(UserID.self), text: try reader.readString()))
            case "SessionStarted":
                self = .sessionStarted(
                    SessionStarted(
                        session: try reader.read(SessionID.self), user: try reader.read(UserID.self),
                        expiresAt: EventTime(millisecondsSince1970: try reader.readInt64())))
            case "SessionEnded":
                self = .sessionEnded(
                    SessionEnded(session: try reader.read(SessionID.self), user: try reader.read(UserID.self)))
            case "PasswordChanged":
                let user = try reader.read(UserID.self)
                let hash = try reader.readString()
                let count = try reader.readInt64()
                // Each id takes at least its length's four bytes: a count past that is a damaged payload.
                guard count >= 0, count <= event.payload.count / 4 else { throw PayloadError.truncated }
                let resets = try (0..<count).map { _ in try reader.read(ResetID.self) }
                self = .passwordChanged(PasswordChanged(user: user, passwordHash: hash, revokedResets: resets))
            case "PasswordResetRequested":
                self = .passwordResetRequested(
                    PasswordResetRequested(
                        user: try reader.read(UserID.self), reset: try reader.read(ResetID.self),
                        expiresAt: EventTime(millisecondsSince1970: try reader.readInt64())))
            case "Blocked":
                self = .blocked(Blocked(blocker: try reader.read(UserID.self), blocked: try reader.read(UserID.self)))
            case "Unblocked":
                self = .unblocked(
                    Unblocked(
                        blocker: try reader.read(UserID.self), blocked: try reader.read(UserID.self),
                        blockedAt: LogPosition(try reader.readUInt64())))
            case "Muted":
                self = .muted(Muted(muter: try reader.read(UserID.self), muted: try reader.read(UserID.self)))
            case "Unmuted":
                self = .unmuted(
                    Unmuted(
                        muter: try reader.read(UserID.self), muted: try reader.read(UserID.self),
                        mutedAt: LogPosition(try reader.readUInt64())))
            case "ReportFiled":
                let report = try reader.read(ReportID.self)
                let reporter = try reader.read(UserID.self)
                let target = try reader.readReportTarget()
                let author = try reader.read(UserID.self)
                guard let reason = ReportReason(rawValue: try reader.readString()) else {
                    throw PayloadError.badFlag(0)
                }
                self = .reportFiled(
                    ReportFiled(
                        report: report, reporter: reporter, target: target, targetAuthor: author, reason: reason,
                        details: try reader.readString()))
            case "ReportResolved":
                let report = try reader.read(ReportID.self)
                guard let action = ReportAction(rawValue: try reader.readString()) else {
                    throw PayloadError.badFlag(0)
                }
                self = .reportResolved(
                    ReportResolved(report: report, action: action, filedAt: LogPosition(try reader.readUInt64())))
            case "UserSuspended":
                self = .userSuspended(UserSuspended(user: try reader.read(UserID.self)))
            case "UserUnsuspended":
                self = .userUnsuspended(UserUnsuspended(user: try reader.read(UserID.self)))
            case "AccountDeleted":
                self = .accountDeleted(AccountDeleted(user: try reader.read(UserID.self)))
            case "ErasureCompleted":
                self = .erasureCompleted(ErasureCompleted(user: try reader.read(UserID.self)))
            default:
                throw DomainEventDecodingError(event: event, reason: "unknown event type \(event.type)")
            }
            try reader.finish()
        } catch let error as PayloadError {
            throw DomainEventDecodingError(event: event, reason: error.description)
        } catch let error as DataKeyError {
            throw DomainEventDecodingError(event: event, reason: error.description)
        }
    }
}

/// A stored event this build cannot read.
public struct DomainEventDecodingError: Error, CustomStringConvertible {
    public let position: LogPosition
    public let type: String
    public let reason: String

    init(event: RecordedEvent, reason: String) {
        self.position = event.position
        self.type = event.type
        self.reason = reason
    }

    public var description: String { "event \(type) at position \(position): \(reason)" }
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

extension PayloadReader {
    /// A report's target as ``PayloadWriter/write(_:)-(ReportTarget)`` wrote it.
    public mutating func readReportTarget() throws -> ReportTarget {
        switch try readByte() {
        case 1: .post(try read(PostID.self))
        case 2: .comment(try read(PostID.self), try read(CommentID.self))
        case 3: .user(try read(UserID.self))
        case let flag: throw PayloadError.badFlag(flag)
        }
    }
}
