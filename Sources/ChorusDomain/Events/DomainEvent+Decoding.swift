import ChorusLog

/// How a stored event is read back: every schema version ever written (see
/// ``DomainEvent/currentSchemaVersion(ofType:)`` and the list beside it) decodes to the current shape, so a log written
/// by an older Chorus replays and projects unchanged.
extension DomainEvent {
    /// Decodes a stored event, opening its personal fields with their owner's key in `keys`; an erased user's read as
    /// empty. Throws ``DomainEventDecodingError`` for an unknown type or version, a bad payload, or a missing key.
    public init(decoding event: borrowing RecordedEvent, keys: borrowing any PersonalDataKeys) throws {
        // Both borrowed, here and in `decode`: `keys` is one object that every thread decoding events shares, and a
        // copy for each event retained it, two cores taking turns with its reference count.
        self = try Self.decode(
            typeName: event.type, version: event.schemaVersion, payload: event.payload, at: event.position, keys: keys)
    }

    /// Decodes an event from the fields that decoding reads: for a caller whose events lie in memory the call could
    /// change (an array's elements), which would otherwise copy the whole event, retaining and releasing its strings
    /// and payload, to hand it on.
    static func decode(
        typeName: String, version: UInt16, payload: [UInt8], at stored: LogPosition, keys: any PersonalDataKeys
    ) throws -> DomainEvent {
        func failure(_ reason: String) -> DomainEventDecodingError {
            DomainEventDecodingError(position: stored, type: typeName, reason: reason)
        }
        guard let type = EventType(storedName: typeName) else { throw failure("unknown event type \(typeName)") }
        guard (1...type.currentSchemaVersion).contains(version) else {
            throw failure("unknown schema version \(version)")
        }
        var reader = PayloadReader(payload)
        /// What version 2 of likes, unlikes, comments and unfollows added; nil in version 1.
        func postAuthor() throws -> UserID? { version >= 2 ? try reader.readOptional(UserID.self) : nil }
        func position() throws -> LogPosition? { version >= 2 ? try reader.readOptionalPosition() : nil }
        /// Whether this type's version seals its personal fields.
        let isSealed = version >= (type == .commentAdded ? 3 : 2)
        /// The reader of `owner`'s sealed fields; nil when the owner was erased.
        func opened(_ owner: UserID) throws -> PayloadReader? {
            try reader.withBytes { try SealedFields.open($0, owner: owner, type: typeName, keys: keys) }
        }
        let decoded: DomainEvent
        do {
            switch type {
            case .userRegistered where isSealed:
                let user = try reader.read(UserID.self)
                let hash = try reader.readString()
                var fields = try opened(user)
                decoded = .userRegistered(
                    UserRegistered(
                        user: user, email: try fields?.readString() ?? "", passwordHash: hash,
                        name: try fields?.readString() ?? "", major: try fields?.readString() ?? "",
                        bio: try fields?.readString() ?? ""))
                try fields?.finish()
            case .userRegistered:
                decoded = .userRegistered(
                    UserRegistered(
                        user: try reader.read(UserID.self), email: try reader.readString(),
                        passwordHash: try reader.readString(), name: try reader.readString(),
                        major: try reader.readString(), bio: try reader.readString()))
            case .profileEdited:
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
                decoded = .profileEdited(
                    ProfileEdited(user: user, name: name, major: major, bio: bio, profileImage: image))
            case .postCreated where isSealed:
                let post = try reader.read(PostID.self)
                let author = try reader.read(UserID.self)
                let image = try reader.readOptional(MediaID.self)
                let repostOf = try reader.readOptional(PostID.self)
                var fields = try opened(author)
                decoded = .postCreated(
                    PostCreated(
                        post: post, author: author, caption: try fields?.readString() ?? "",
                        text: try fields?.readString() ?? "", image: image, repostOf: repostOf))
                try fields?.finish()
            case .postCreated:
                decoded = .postCreated(
                    PostCreated(
                        post: try reader.read(PostID.self), author: try reader.read(UserID.self),
                        caption: try reader.readString(), text: try reader.readString(),
                        image: try reader.readOptional(MediaID.self), repostOf: try reader.readOptional(PostID.self)))
            case .postEdited where isSealed:
                let post = try reader.read(PostID.self)
                let author = try reader.read(UserID.self)
                var fields = try opened(author)
                decoded = .postEdited(
                    PostEdited(
                        post: post, author: author, caption: try fields?.readOptionalString(),
                        text: try fields?.readOptionalString()))
                try fields?.finish()
            case .postEdited:
                decoded = .postEdited(
                    PostEdited(
                        post: try reader.read(PostID.self), author: try reader.read(UserID.self),
                        caption: try reader.readOptionalString(), text: try reader.readOptionalString()))
            case .postDeleted:
                decoded = .postDeleted(
                    PostDeleted(
                        post: try reader.read(PostID.self), author: try reader.read(UserID.self),
                        postedAt: LogPosition(try reader.readUInt64()), repostOf: try reader.readOptional(PostID.self)))
            case .liked:
                decoded = .liked(
                    Liked(
                        user: try reader.read(UserID.self), post: try reader.read(PostID.self),
                        postAuthor: try postAuthor()))
            case .unliked:
                decoded = .unliked(
                    Unliked(
                        user: try reader.read(UserID.self), post: try reader.read(PostID.self),
                        postAuthor: try postAuthor(),
                        likedAt: try position()))
            case .reposted:
                decoded = .reposted(
                    Reposted(
                        user: try reader.read(UserID.self), post: try reader.read(PostID.self),
                        postAuthor: try reader.read(UserID.self)))
            case .unreposted:
                decoded = .unreposted(
                    Unreposted(
                        user: try reader.read(UserID.self), post: try reader.read(PostID.self),
                        postAuthor: try reader.read(UserID.self), repostedAt: LogPosition(try reader.readUInt64())))
            case .commentAdded where isSealed:
                let comment = try reader.read(CommentID.self)
                let post = try reader.read(PostID.self)
                let author = try reader.read(UserID.self)
                let postAuthor = try reader.readOptional(UserID.self)
                var fields = try opened(author)
                decoded = .commentAdded(
                    CommentAdded(
                        comment: comment, post: post, author: author, text: try fields?.readString() ?? "",
                        postAuthor: postAuthor))
                try fields?.finish()
            case .commentAdded:
                decoded = .commentAdded(
                    CommentAdded(
                        comment: try reader.read(CommentID.self), post: try reader.read(PostID.self),
                        author: try reader.read(UserID.self), text: try reader.readString(),
                        postAuthor: try postAuthor()))
            case .commentDeleted:
                decoded = .commentDeleted(
                    CommentDeleted(
                        comment: try reader.read(CommentID.self), post: try reader.read(PostID.self),
                        author: try reader.read(UserID.self), postAuthor: try reader.read(UserID.self),
                        commentedAt: LogPosition(try reader.readUInt64())))
            case .followed:
                decoded = .followed(
                    Followed(follower: try reader.read(UserID.self), followee: try reader.read(UserID.self)))
            case .unfollowed:
                decoded = .unfollowed(
                    Unfollowed(
                        follower: try reader.read(UserID.self), followee: try reader.read(UserID.self),
                        followedAt: try position()))
            case .messageSent where isSealed:
                let message = try reader.read(MessageID.self)
                let from = try reader.read(UserID.self)
                let to = try reader.read(UserID.self)
                var fields = try opened(from)
                decoded = .messageSent(
                    MessageSent(message: message, from: from, to: to, text: try fields?.readString() ?? ""))
                try fields?.finish()
            case .messageSent:
                decoded = .messageSent(
                    MessageSent(
                        message: try reader.read(MessageID.self), from: try reader.read(UserID.self),
                        to: try reader.read(UserID.self), text: try reader.readString()))
            case .roomCreated:
                decoded = .roomCreated(
                    RoomCreated(
                        room: try reader.read(RoomID.self), creator: try reader.read(UserID.self),
                        name: try reader.readString()))
            case .roomJoined:
                decoded = .roomJoined(
                    RoomJoined(room: try reader.read(RoomID.self), user: try reader.read(UserID.self)))
            case .roomLeft:
                decoded = .roomLeft(
                    RoomLeft(
                        room: try reader.read(RoomID.self), user: try reader.read(UserID.self),
                        joinedAt: LogPosition(try reader.readUInt64())))
            case .roomMessageSent:
                // Sealed from its first version.
                let message = try reader.read(MessageID.self)
                let room = try reader.read(RoomID.self)
                let from = try reader.read(UserID.self)
                var fields = try opened(from)
                decoded = .roomMessageSent(
                    RoomMessageSent(message: message, room: room, from: from, text: try fields?.readString() ?? ""))
                try fields?.finish()
            case .notificationsRead:
                decoded = .notificationsRead(
                    NotificationsRead(user: try reader.read(UserID.self), upTo: LogPosition(try reader.readUInt64())))
            case .conversationRead:
                decoded = .conversationRead(
                    ConversationRead(reader: try reader.read(UserID.self), partner: try reader.read(UserID.self)))
            case .sessionStarted:
                decoded = .sessionStarted(
                    SessionStarted(
                        session: try reader.read(SessionID.self), user: try reader.read(UserID.self),
                        expiresAt: EventTime(millisecondsSince1970: try reader.readInt64())))
            case .sessionEnded:
                decoded = .sessionEnded(
                    SessionEnded(session: try reader.read(SessionID.self), user: try reader.read(UserID.self)))
            case .passwordChanged:
                let user = try reader.read(UserID.self)
                let hash = try reader.readString()
                let count = try reader.readInt64()
                // Each id takes at least its length's four bytes: a count past that is a damaged payload.
                guard count >= 0, count <= payload.count / 4 else { throw PayloadError.truncated }
                let resets = try (0..<count).map { _ in try reader.read(ResetID.self) }
                decoded = .passwordChanged(PasswordChanged(user: user, passwordHash: hash, revokedResets: resets))
            case .passwordResetRequested:
                decoded = .passwordResetRequested(
                    PasswordResetRequested(
                        user: try reader.read(UserID.self), reset: try reader.read(ResetID.self),
                        expiresAt: EventTime(millisecondsSince1970: try reader.readInt64())))
            case .passwordResetUnmatched:
                decoded = .passwordResetUnmatched(PasswordResetUnmatched())
            case .blocked:
                decoded = .blocked(
                    Blocked(blocker: try reader.read(UserID.self), blocked: try reader.read(UserID.self)))
            case .unblocked:
                decoded = .unblocked(
                    Unblocked(
                        blocker: try reader.read(UserID.self), blocked: try reader.read(UserID.self),
                        blockedAt: LogPosition(try reader.readUInt64())))
            case .muted:
                decoded = .muted(Muted(muter: try reader.read(UserID.self), muted: try reader.read(UserID.self)))
            case .unmuted:
                decoded = .unmuted(
                    Unmuted(
                        muter: try reader.read(UserID.self), muted: try reader.read(UserID.self),
                        mutedAt: LogPosition(try reader.readUInt64())))
            case .reportFiled:
                let report = try reader.read(ReportID.self)
                let reporter = try reader.read(UserID.self)
                let target = try reader.readReportTarget()
                let author = try reader.read(UserID.self)
                guard let reason = ReportReason(rawValue: try reader.readString()) else {
                    throw PayloadError.badFlag(0)
                }
                decoded = .reportFiled(
                    ReportFiled(
                        report: report, reporter: reporter, target: target, targetAuthor: author, reason: reason,
                        details: try reader.readString()))
            case .reportResolved:
                let report = try reader.read(ReportID.self)
                guard let action = ReportAction(rawValue: try reader.readString()) else {
                    throw PayloadError.badFlag(0)
                }
                decoded = .reportResolved(
                    ReportResolved(report: report, action: action, filedAt: LogPosition(try reader.readUInt64())))
            case .userSuspended:
                decoded = .userSuspended(UserSuspended(user: try reader.read(UserID.self)))
            case .userUnsuspended:
                decoded = .userUnsuspended(UserUnsuspended(user: try reader.read(UserID.self)))
            case .accountDeleted:
                decoded = .accountDeleted(AccountDeleted(user: try reader.read(UserID.self)))
            case .erasureCompleted:
                decoded = .erasureCompleted(ErasureCompleted(user: try reader.read(UserID.self)))
            }
            try reader.finish()
            return decoded
        } catch let error as PayloadError {
            throw failure(error.description)
        } catch let error as DataKeyError {
            throw failure(error.description)
        }
    }
}

/// A stored event this build cannot read.
public struct DomainEventDecodingError: Error, CustomStringConvertible {
    public let position: LogPosition
    public let type: String
    public let reason: String

    init(position: LogPosition, type: String, reason: String) {
        (self.position, self.type, self.reason) = (position, type, reason)
    }

    public var description: String { "event \(type) at position \(position): \(reason)" }
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
