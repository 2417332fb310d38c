import ChorusDomain
import ChorusLog

/// What one live stream can tell about an event without the read models: whether the event may change anything on
/// its viewer's topics (``ReadView/liveChanges(of:decoded:for:on:)``), erring towards yes. A stream reads the read
/// models only for the events that may: with many streams open, most of the log's batches concern few of them, and a
/// snapshot for every stream at every batch was most of what the streams cost the server (BENCHMARKS.md,
/// `chorus bench day`).
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
        followees = feed ? try view.followees(of: viewer, upTo: Self.followeeLimit) : nil
    }

    /// Notes whom the viewer follows from now on: called with every event the stream walks, in log order, before
    /// ``mayConcern(_:)`` is asked about any of its batch (a post may precede the follow that brings it into the
    /// feed in one batch).
    public mutating func learn(from event: DomainEvent) {
        guard case .followed(let followed) = event, followed.follower == viewer else { return }
        if (followees?.count ?? .max) < Self.followeeLimit {
            followees?.insert(followed.followee)
        } else {
            followees = nil
        }
    }

    /// Learns from every one of `events` (``learn(from:)``), then answers those that may concern the stream
    /// (``mayConcern(_:)``), in order: how a stream, or the hub for it, walks a batch.
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
        func watches(_ post: PostID) -> Bool { somePost && topics.contains(.post(post)) }
        func watches(_ room: RoomID) -> Bool { someRoom && topics.contains(.room(room)) }
        /// Whether a post or repost by `user` may reach the viewer's feed.
        func inFeed(_ user: UserID) -> Bool {
            feed && (user == viewer || followees.map { $0.contains(user) } ?? true)
        }
        /// Whether the notification of a post's author may be the viewer's (an author not recorded may be).
        func notifies(_ postAuthor: UserID?) -> Bool { notifications && postAuthor.map { $0 == viewer } ?? true }
        switch event {
        case .postCreated(let event): return inFeed(event.author)
        case .postDeleted(let event): return inFeed(event.author)
        case .reposted(let event):
            return inFeed(event.user) || watches(event.post) || notifies(event.postAuthor)
        case .unreposted(let event): return inFeed(event.user) || watches(event.post)
        case .liked(let event): return watches(event.post) || notifies(event.postAuthor)
        case .unliked(let event): return watches(event.post)
        case .commentAdded(let event): return watches(event.post) || notifies(event.postAuthor)
        case .commentDeleted(let event): return watches(event.post)
        case .followed(let event): return notifications && event.followee == viewer
        case .unfollowed(let event): return feed && event.follower == viewer
        case .blocked(let event): return feed && (event.blocker == viewer || event.blocked == viewer)
        case .messageSent(let event): return event.from == viewer || event.to == viewer
        case .conversationRead(let event): return event.partner == viewer && conversations
        case .roomMessageSent(let event): return watches(event.room)
        case .roomJoined(let event): return watches(event.room)
        case .roomLeft(let event): return watches(event.room)
        case .profileEdited(let event): return someProfile && topics.contains(.profile(event.user))
        case .userRegistered, .postEdited, .roomCreated, .notificationsRead, .sessionStarted, .sessionEnded,
            .passwordChanged, .passwordResetRequested, .unblocked, .muted, .unmuted, .reportFiled, .reportResolved,
            .userSuspended, .userUnsuspended, .accountDeleted, .erasureCompleted:
            return false
        }
    }
}
