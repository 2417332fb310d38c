import ChorusLog
import ChorusText

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
    case passwordResetUnmatched = "PasswordResetUnmatched"
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

    /// The type stored under `name`; nil for a name no Chorus wrote. Found in a table of its own: `init(rawValue:)`,
    /// like a `switch` over the names, compares `name` with each case's in turn, a call into the runtime for every
    /// one that does not match (a follow, the commonest event, is the sixteenth case), and a dictionary hashed every
    /// name through SipHash.
    init?(storedName name: String) {
        guard let type = name.withBorrowedUTF8({ Self.byName.type(named: $0) }) else { return nil }
        self = type
    }

    private static let byName = NameTable()

    /// The types by name, open-addressed: a slot from the name's length and two of its bytes (which tell nearly every
    /// two names apart), then the names from there on compared until one matches or a slot is empty.
    private struct NameTable: Sendable {
        private static let size = 128
        private var slots: [(type: EventType, name: [UInt8])?] = Array(repeating: nil, count: size)

        init() {
            precondition(EventType.allCases.count <= Self.size / 2, "more event types than the name table holds")
            for type in EventType.allCases {
                let name = Array(type.rawValue.utf8)
                var slot = name.withUnsafeBufferPointer(Self.slot(of:))
                while slots[slot] != nil { slot = (slot + 1) & (Self.size - 1) }
                slots[slot] = (type, name)
            }
        }

        func type(named name: UnsafeBufferPointer<UInt8>) -> EventType? {
            var slot = Self.slot(of: name)
            while let entry = slots[slot] {
                if entry.name.withUnsafeBufferPointer({ $0.elementsEqual(name) }) { return entry.type }
                slot = (slot + 1) & (Self.size - 1)
            }
            return nil
        }

        private static func slot(of name: UnsafeBufferPointer<UInt8>) -> Int {
            guard let first = name.first else { return 0 }
            return (name.count &* 8 &+ Int(first) &* 4 &+ Int(name[min(4, name.count - 1)])) & (size - 1)
        }
    }

    /// The schema version the type is written with now.
    var currentSchemaVersion: UInt16 {
        switch self {
        case .commentAdded: 3
        case .liked, .unliked, .unfollowed, .userRegistered, .profileEdited, .postCreated, .postEdited, .messageSent: 2
        default: 1
        }
    }
}
