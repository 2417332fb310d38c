import ChorusLog

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

/// Someone asked to reset the password of an e-mail no account has. Nothing goes out and nothing can be reset; the
/// event is there so that such a request changes the log as a reset of an account's password does (one event), and
/// the log's positions, which clients see, tell no one whether an e-mail has an account. It keeps nothing of the
/// e-mail.
public struct PasswordResetUnmatched: Sendable, Hashable {
    public init() {}
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
