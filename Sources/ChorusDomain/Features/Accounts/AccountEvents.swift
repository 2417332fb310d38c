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
    /// Lowercase, unique (``Handles``); an account registered before handles has the one its id makes
    /// (``Handles/ofEarlierAccount(_:)``), and an erased account's reads empty.
    public var handle: String
    public init(
        user: UserID, email: String, passwordHash: String, name: String, major: String, bio: String, handle: String
    ) {
        self.user = user
        self.email = email
        self.passwordHash = passwordHash
        self.name = name
        self.major = major
        self.bio = bio
        self.handle = handle
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
    /// A new handle, lowercase and unique (``Handles``).
    public var handle: String?
    /// The account made private (only accepted followers see its posts) or public again; nil: unchanged.
    public var isPrivate: Bool?
    public init(
        user: UserID, name: String?, major: String?, bio: String?, profileImage: ProfileImageChange?,
        handle: String? = nil, isPrivate: Bool? = nil
    ) {
        self.user = user
        self.name = name
        self.major = major
        self.bio = bio
        self.profileImage = profileImage
        self.handle = handle
        self.isPrivate = isPrivate
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

/// Version 3 seals the handle after the bio; version 2 seals the personal fields (e-mail, name, major, bio) under the
/// user's key, after the hash; version 1 holds them in plain, and decodes as it is. Before version 3 the handle is
/// the one the id makes.
extension UserRegistered: StoredEvent {
    static let typeName = "UserRegistered"
    static let schemaVersion: UInt16 = 3
    var stream: StreamID { .user(user) }
    var domainEvent: DomainEvent { .userRegistered(self) }

    func encode(to payload: inout PayloadWriter, keys: any PersonalDataKeys) throws {
        payload.write(user)
        payload.write(passwordHash)
        try payload.writeSealed(by: user, in: Self.typeName, keys: keys) {
            $0.write(email)
            $0.write(name)
            $0.write(major)
            $0.write(bio)
            $0.write(handle)
        }
    }

    init(from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys) throws {
        let user = try payload.read(UserID.self)
        guard version >= 2 else {
            self.init(
                user: user, email: try payload.readString(), passwordHash: try payload.readString(),
                name: try payload.readString(), major: try payload.readString(), bio: try payload.readString(),
                handle: Handles.ofEarlierAccount(user))
            return
        }
        let hash = try payload.readString()
        var fields = try payload.openSealed(by: user, in: Self.typeName, keys: keys)
        let (email, name, major, bio) = (
            try fields?.readString() ?? "", try fields?.readString() ?? "", try fields?.readString() ?? "",
            try fields?.readString() ?? ""
        )
        let handle = version >= 3 ? try fields?.readString() ?? "" : Handles.ofEarlierAccount(user)
        self.init(
            user: user, email: email, passwordHash: hash, name: name, major: major, bio: bio, handle: handle)
        try fields?.finish()
    }

    func changeState(_ state: DecisionState, at position: LogPosition, in changes: inout DecisionState.ChangeList) {
        changes.put(state.emails, .init(Validate.emailKey(email)), text: user.rawValue)
        changes.put(state.users, .init(user.rawValue), text: passwordHash)
        DecisionState.putHandle(handle, of: user, in: state, &changes)
    }
}

/// Version 3 seals the handle after the bio; version 2 seals the name, major and bio under the user's key; version 1
/// holds them in plain.
/// Version 4 appends whether the account became private (version 3 and before: unchanged).
extension ProfileEdited: StoredEvent {
    static let typeName = "ProfileEdited"
    static let schemaVersion: UInt16 = 4
    var stream: StreamID { .user(user) }
    var domainEvent: DomainEvent { .profileEdited(self) }

    func encode(to payload: inout PayloadWriter, keys: any PersonalDataKeys) throws {
        payload.write(user)
        try payload.writeSealed(by: user, in: Self.typeName, keys: keys) {
            $0.write(name)
            $0.write(major)
            $0.write(bio)
            $0.write(handle)
        }
        switch profileImage {
        case nil: payload.write(UInt8(0))
        case .remove?: payload.write(UInt8(1))
        case .set(let media)?:
            payload.write(UInt8(2))
            payload.write(media)
        }
        payload.write(isPrivate.map { UInt8($0 ? 1 : 2) } ?? 0)
    }

    init(from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys) throws {
        let user = try payload.read(UserID.self)
        let (name, major, bio): (String?, String?, String?)
        var handle: String?
        if version >= 2 {
            var fields = try payload.openSealed(by: user, in: Self.typeName, keys: keys)
            (name, major, bio) = (
                try fields?.readOptionalString(), try fields?.readOptionalString(), try fields?.readOptionalString()
            )
            if version >= 3 { handle = try fields?.readOptionalString() }
            try fields?.finish()
        } else {
            (name, major, bio) = (
                try payload.readOptionalString(), try payload.readOptionalString(), try payload.readOptionalString()
            )
        }
        let image: ProfileImageChange? =
            switch try payload.readByte() {
            case 0: nil
            case 1: .remove
            case 2: .set(try payload.read(MediaID.self))
            case let flag: throw PayloadError.badFlag(flag)
            }
        let isPrivate: Bool? =
            switch version >= 4 ? try payload.readByte() : 0 {
            case 0: nil
            case 1: true
            case 2: false
            case let flag: throw PayloadError.badFlag(flag)
            }
        self.init(
            user: user, name: name, major: major, bio: bio, profileImage: image, handle: handle, isPrivate: isPrivate)
    }

    func changeState(_ state: DecisionState, at position: LogPosition, in changes: inout DecisionState.ChangeList) {
        if case .set(let media)? = profileImage { changes.put(state.attachedMedia, .init(media.rawValue), []) }
        if let handle { DecisionState.putHandle(handle, of: user, in: state, &changes) }
        switch isPrivate {
        case true?: changes.put(state.privateAccounts, .init(user.rawValue), since: position)
        case false?: changes.remove(state.privateAccounts, .init(user.rawValue))
        case nil: break
        }
    }
}

extension SessionStarted: StoredEvent {
    static let typeName = "SessionStarted"
    static let schemaVersion: UInt16 = 1
    var stream: StreamID { .user(user) }
    var domainEvent: DomainEvent { .sessionStarted(self) }

    func encode(to payload: inout PayloadWriter, keys: any PersonalDataKeys) throws {
        payload.write(session)
        payload.write(user)
        payload.write(Int64(expiresAt.millisecondsSince1970))
    }

    init(from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys) throws {
        self.init(
            session: try payload.read(SessionID.self), user: try payload.read(UserID.self),
            expiresAt: EventTime(millisecondsSince1970: try payload.readInt64()))
    }

    func changeState(_ state: DecisionState, at position: LogPosition, in changes: inout DecisionState.ChangeList) {
        changes.put(state.sessions, .init(session.rawValue)) { value in
            // Its user, NUL, and its expiry.
            value.appendUTF8(of: user.rawValue)
            value.append(0)
            withUnsafeBytes(of: expiresAt.millisecondsSince1970.bigEndian) { value.append(contentsOf: $0) }
        }
        changes.put(state.userSessions, .init(user.rawValue, session.rawValue), [])
    }
}

extension SessionEnded: StoredEvent {
    static let typeName = "SessionEnded"
    static let schemaVersion: UInt16 = 1
    var stream: StreamID { .user(user) }
    var domainEvent: DomainEvent { .sessionEnded(self) }

    func encode(to payload: inout PayloadWriter, keys: any PersonalDataKeys) throws {
        payload.write(session)
        payload.write(user)
    }

    init(from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys) throws {
        self.init(session: try payload.read(SessionID.self), user: try payload.read(UserID.self))
    }

    func changeState(_ state: DecisionState, at position: LogPosition, in changes: inout DecisionState.ChangeList) {
        changes.remove(state.sessions, .init(session.rawValue))
        changes.remove(state.userSessions, .init(user.rawValue, session.rawValue))
    }
}

extension PasswordChanged: StoredEvent {
    static let typeName = "PasswordChanged"
    static let schemaVersion: UInt16 = 1
    var stream: StreamID { .user(user) }
    var domainEvent: DomainEvent { .passwordChanged(self) }

    func encode(to payload: inout PayloadWriter, keys: any PersonalDataKeys) throws {
        payload.write(user)
        payload.write(passwordHash)
        payload.write(Int64(revokedResets.count))
        for reset in revokedResets { payload.write(reset) }
    }

    init(from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys) throws {
        let user = try payload.read(UserID.self)
        let hash = try payload.readString()
        let count = try payload.readInt64()
        // Each id takes at least its length's four bytes: a count past that is a damaged payload.
        guard count >= 0, count <= payload.remaining / 4 else { throw PayloadError.truncated }
        let resets = try (0..<count).map { _ in try payload.read(ResetID.self) }
        self.init(user: user, passwordHash: hash, revokedResets: resets)
    }

    func changeState(_ state: DecisionState, at position: LogPosition, in changes: inout DecisionState.ChangeList) {
        changes.put(state.users, .init(user.rawValue), text: passwordHash)
        for reset in revokedResets { changes.remove(state.resets, .init(user.rawValue, reset.rawValue)) }
    }
}

extension PasswordResetRequested: StoredEvent {
    static let typeName = "PasswordResetRequested"
    static let schemaVersion: UInt16 = 1
    var stream: StreamID { .user(user) }
    var domainEvent: DomainEvent { .passwordResetRequested(self) }

    func encode(to payload: inout PayloadWriter, keys: any PersonalDataKeys) throws {
        payload.write(user)
        payload.write(reset)
        payload.write(expiresAt.millisecondsSince1970)
    }

    init(from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys) throws {
        self.init(
            user: try payload.read(UserID.self), reset: try payload.read(ResetID.self),
            expiresAt: EventTime(millisecondsSince1970: try payload.readInt64()))
    }

    func changeState(_ state: DecisionState, at position: LogPosition, in changes: inout DecisionState.ChangeList) {
        withUnsafeBytes(of: expiresAt.millisecondsSince1970.bigEndian) {
            changes.put(state.resets, .init(user.rawValue, reset.rawValue), $0)
        }
    }
}

/// Its stream is one for all of them: it names no user.
extension PasswordResetUnmatched: StoredEvent {
    static let typeName = "PasswordResetUnmatched"
    static let schemaVersion: UInt16 = 1
    var stream: StreamID { "password-resets" }
    var domainEvent: DomainEvent { .passwordResetUnmatched(self) }

    func encode(to payload: inout PayloadWriter, keys: any PersonalDataKeys) throws {}

    init(from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys) throws {
        self.init()
    }
}

extension AccountDeleted: StoredEvent {
    static let typeName = "AccountDeleted"
    static let schemaVersion: UInt16 = 1
    var stream: StreamID { .user(user) }
    var domainEvent: DomainEvent { .accountDeleted(self) }

    func encode(to payload: inout PayloadWriter, keys: any PersonalDataKeys) throws { payload.write(user) }

    init(from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys) throws {
        self.init(user: try payload.read(UserID.self))
    }

    func changeState(_ state: DecisionState, at position: LogPosition, in changes: inout DecisionState.ChangeList) {
        changes.remove(state.users, .init(user.rawValue))
        changes.removeEntries(of: state.emails, holding: user.rawValue)
        // As the e-mails: a fold after the erasure no longer reads the handles the account had.
        changes.removeEntries(of: state.handles, holding: user.rawValue)
        changes.remove(state.userHandles, .init(user.rawValue))
        changes.remove(state.privateAccounts, .init(user.rawValue))
        changes.put(state.erasures, .init(user.rawValue), since: position)
    }
}

extension ErasureCompleted: StoredEvent {
    static let typeName = "ErasureCompleted"
    static let schemaVersion: UInt16 = 1
    var stream: StreamID { .user(user) }
    var domainEvent: DomainEvent { .erasureCompleted(self) }

    func encode(to payload: inout PayloadWriter, keys: any PersonalDataKeys) throws { payload.write(user) }

    init(from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys) throws {
        self.init(user: try payload.read(UserID.self))
    }

    func changeState(_ state: DecisionState, at position: LogPosition, in changes: inout DecisionState.ChangeList) {
        changes.put(state.completedErasures, .init(user.rawValue), since: position)
    }
}
