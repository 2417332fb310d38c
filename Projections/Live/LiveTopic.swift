import ChorusDomain

/// What a client may listen to on its live stream (`GET /v1/live?topics=…`): its notifications, its recent-messages
/// list, its messages with one user, one post's comments and likes, its Following feed, one user's profile, and one
/// room it is a member of.
public enum LiveTopic: Hashable, Sendable {
    case notifications
    case conversations
    case conversation(UserID)
    case post(PostID)
    case feed
    case profile(UserID)
    case room(RoomID)

    /// A topic as a client names it: `notifications`, `conversations`, `conversation:{userId}`, `post:{postId}`,
    /// `feed`, `profile:{userId}`, `room:{roomId}`; nil for anything else.
    public init?(_ text: Substring) {
        switch text {
        case "notifications": self = .notifications
        case "conversations": self = .conversations
        case "feed": self = .feed
        default:
            let parts = text.split(separator: ":", maxSplits: 1)
            guard parts.count == 2 else { return nil }
            if parts[0] == "conversation", let user = UserID(String(parts[1])) {
                self = .conversation(user)
            } else if parts[0] == "post", let post = PostID(String(parts[1])) {
                self = .post(post)
            } else if parts[0] == "profile", let user = UserID(String(parts[1])) {
                self = .profile(user)
            } else if parts[0] == "room", let room = RoomID(String(parts[1])) {
                self = .room(room)
            } else {
                return nil
            }
        }
    }
}
