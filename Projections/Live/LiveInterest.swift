import ChorusDomain
import ChorusLog

/// What one live stream can tell about an event without the read models: whether the event may change anything on
/// its viewer's topics (``ReadView/liveChanges(of:decoded:for:on:)``), erring towards yes. A stream reads the read
/// models only for the events that may: with many streams open, most of the log's batches concern few of them, and a
/// snapshot for every stream at every batch was most of what the streams cost the server (`chorus bench day`).
///
/// Keep ``mayConcern(_:)`` in step with `liveChanges`: an event it wrongly passes over never reaches the stream.
public struct LiveInterest: Sendable {
    public let viewer: UserID
    public let topics: Set<LiveTopic>
    /// Everyone the viewer followed when the stream began, and everyone they followed since (unfollows are not taken
    /// out: more is only more reading): whose posts and reposts may reach the feed. Nil without the `feed` topic, or
    /// when the viewer follows more than ``followeeLimit``: then every post and repost may.
    private var followees: Set<UserID>?
    /// Which kinds of topics the stream has, told apart without hashing a topic for every event.
    private let feed: Bool
    private let notifications: Bool
    private let conversations: Bool
    private let somePost: Bool
    private let someRoom: Bool
    private let someProfile: Bool
    private let someHashtag: Bool

    /// The most followees a stream keeps (about 64 bytes each).
    public static let followeeLimit = 2_000

    /// The interest of `viewer`'s stream on `topics`, with whom they follow as `view` has it. Every event after
    /// `view`'s position must then be passed to ``learn(from:)`` (else ``forgetFollowees()``), and the stream's events
    /// read from views at that position or later.
    public init(viewer: UserID, topics: Set<LiveTopic>, in view: borrowing ReadView) throws {
        self.viewer = viewer
        self.topics = topics
        (feed, notifications, conversations) = (
            topics.contains(.feed), topics.contains(.notifications), topics.contains(.conversations)
        )
        somePost = topics.contains { if case .post = $0 { true } else { false } }
        someRoom = topics.contains { if case .room = $0 { true } else { false } }
        someProfile = topics.contains { if case .profile = $0 { true } else { false } }
        someHashtag = topics.contains { if case .hashtag = $0 { true } else { false } }
        followees = feed ? try view.followees(of: viewer, upTo: Self.followeeLimit) : nil
    }

    /// Notes whom the viewer follows from now on: called with every event the stream walks, in log order, before
    /// ``mayConcern(_:)`` is asked about any of its batch (a post may precede the follow that brings it into the
    /// feed in one batch). Answers the subject the stream listens to from now on, if any: the new followee's posts,
    /// unless the stream now listens to everyone's (``listensToEveryAuthor``).
    @discardableResult
    public mutating func learn(from event: DomainEvent) -> LiveSubject? {
        guard case .followed(let followed) = event, followed.follower == viewer else { return nil }
        if (followees?.count ?? .max) < Self.followeeLimit {
            return followees?.insert(followed.followee).inserted == true ? .postsBy(followed.followee) : nil
        }
        followees = nil
        return nil
    }

    /// Learns from every one of `events` (``learn(from:)``), then answers those that may concern the stream
    /// (``mayConcern(_:)``), in order: how a stream walks a batch itself.
    public mutating func walk(_ events: ArraySlice<DecodedEventWindow.Entry>) -> [DecodedEventWindow.Entry] {
        // By index: a for-in loop would copy (and retain) every entry.
        for index in events.indices { learn(from: events[index].event) }
        return events.filter { mayConcern($0.event) }
    }

    /// Takes every post and repost as one that may reach the feed: for a stream that will not walk every follow after
    /// the view its interest was read from.
    public mutating func forgetFollowees() { followees = nil }

    /// Whether `event` may change something on the stream's topics; false only when it cannot.
    public func mayConcern(_ event: DomainEvent) -> Bool {
        var concerns = false
        LiveSubject.forEach(of: event) { subject in concerns = concerns || listens(to: subject) }
        return concerns
    }

    /// Whether an event about `subject` may change something on the stream's topics.
    public func listens(to subject: LiveSubject) -> Bool {
        switch subject {
        case .postsBy(let user): feed && (user == viewer || followees.map { $0.contains(user) } ?? true)
        case .feedOf(let user): feed && user == viewer
        case .notificationsOf(let user): notifications && user == viewer
        case .notificationsOfSomeone: notifications
        case .messagesOf(let user): user == viewer
        case .conversationsOf(let user): conversations && user == viewer
        case .post(let post): somePost && topics.contains(.post(post))
        case .room(let room): someRoom && topics.contains(.room(room))
        case .profile(let user): someProfile && topics.contains(.profile(user))
        case .hashtag(let tag): someHashtag && topics.contains(.hashtag(tag))
        case .sessionsOf(let user): user == viewer
        }
    }

    /// Whether the stream takes posts and reposts by anyone: its viewer follows more than a stream keeps.
    public var listensToEveryAuthor: Bool { feed && followees == nil }

    /// Calls `body` with every subject the stream listens to (``listens(to:)``), but the posts by anyone when it
    /// listens to everyone's (``listensToEveryAuthor``).
    public func forEachSubject(_ body: (LiveSubject) -> Void) {
        if feed {
            body(.feedOf(viewer))
            body(.postsBy(viewer))
            for followee in followees ?? [] { body(.postsBy(followee)) }
        }
        if notifications {
            body(.notificationsOf(viewer))
            body(.notificationsOfSomeone)
        }
        body(.messagesOf(viewer))
        body(.sessionsOf(viewer))
        if conversations { body(.conversationsOf(viewer)) }
        for topic in topics {
            switch topic {
            case .post(let post): body(.post(post))
            case .room(let room): body(.room(room))
            case .profile(let user): body(.profile(user))
            case .hashtag(let tag): body(.hashtag(tag))
            case .notifications, .conversations, .conversation, .feed: break
            }
        }
    }
}
