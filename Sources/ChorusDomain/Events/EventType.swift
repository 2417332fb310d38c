/// The kinds of event the log holds, by the type names it stores them under (``DomainEvent/typeName``).
enum EventType: String, CaseIterable, Sendable {
    case userRegistered = "UserRegistered"
    case profileEdited = "ProfileEdited"
    case postCreated = "PostCreated"
    case postEdited = "PostEdited"
    case postDeleted = "PostDeleted"
    case liked = "Liked"
    case unliked = "Unliked"
    case reposted = "Reposted"
    case unreposted = "Unreposted"
    case commentAdded = "CommentAdded"
    case commentDeleted = "CommentDeleted"
    case followed = "Followed"
    case unfollowed = "Unfollowed"
    case messageSent = "MessageSent"
    case roomCreated = "RoomCreated"
    case roomJoined = "RoomJoined"
    case roomLeft = "RoomLeft"
    case roomMessageSent = "RoomMessageSent"
    case notificationsRead = "NotificationsRead"
    case conversationRead = "ConversationRead"
    case sessionStarted = "SessionStarted"
    case sessionEnded = "SessionEnded"
    case passwordChanged = "PasswordChanged"
    case passwordResetRequested = "PasswordResetRequested"
    case blocked = "Blocked"
    case unblocked = "Unblocked"
    case muted = "Muted"
    case unmuted = "Unmuted"
    case reportFiled = "ReportFiled"
    case reportResolved = "ReportResolved"
    case userSuspended = "UserSuspended"
    case userUnsuspended = "UserUnsuspended"
    case accountDeleted = "AccountDeleted"
    case erasureCompleted = "ErasureCompleted"

    /// The type stored under `name`; nil for a name no Chorus wrote. Found in a table: `init(rawValue:)`, like a
    /// `switch` over the names, compares `name` with each case's in turn, a call into the runtime for every one that
    /// does not match (2.9 % of a replay's samples, most of the demo's events being follows, the sixteenth case).
    init?(storedName name: String) {
        guard let type = Self.byName[name] else { return nil }
        self = type
    }

    private static let byName = Dictionary(uniqueKeysWithValues: allCases.map { ($0.rawValue, $0) })

    /// The schema version the type is written with now.
    var currentSchemaVersion: UInt16 {
        switch self {
        case .commentAdded: 3
        case .liked, .unliked, .unfollowed, .userRegistered, .profileEdited, .postCreated, .postEdited, .messageSent: 2
        default: 1
        }
    }
}
