import ChorusDomain

/// What a client may listen to on its live stream (`GET /v1/live?topics=…`): its notifications, its recent-messages
/// list, its messages with one user, one post's comments and likes, its Following feed, one user's profile, one room
/// it is a member of, and the new posts of one hashtag.
public enum LiveTopic: Hashable, Sendable {
    case notifications
    case conversations
    case conversation(UserID)
    case post(PostID)
    case feed
    case profile(UserID)
    case room(RoomID)
    /// A tag as ``Hashtags/folded(_:)`` has it.
    case hashtag(String)

    /// A topic as a client names it: `notifications`, `conversations`, `conversation:{userId}`, `post:{postId}`,
    /// `feed`, `profile:{userId}`, `room:{roomId}`, `hashtag:{tag}` (any case, with or without `#`); nil for anything
    /// else.
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
            } else if parts[0] == "hashtag", let tag = Hashtags.folded(String(parts[1])) {
                self = .hashtag(tag)
            } else {
                return nil
            }
        }
    }
}
