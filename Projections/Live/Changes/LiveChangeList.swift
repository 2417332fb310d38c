import ChorusDomain
import ChorusLog

/// The changes one event makes on one viewer's topics, as ``ReadView/liveChanges(of:decoded:for:on:)`` collects them.
struct LiveChangeList {
    /// The event's position and time.
    let position: LogPosition
    let recordedAt: EventTime
    let viewer: UserID
    let topics: Set<LiveTopic>
    var changes: [LiveChange] = []
}

extension ReadView {
    /// The viewer's notification the event made, if they follow their notifications.
    func addNotification(to list: inout LiveChangeList) throws {
        guard list.topics.contains(.notifications), let made = try notification(of: list.viewer, at: list.position)
        else { return }
        list.changes.append(.notification(made))
    }

    /// A post that is in no place of the viewer's Following feed any more.
    func addRemoved(_ post: PostID, author: UserID, to list: inout LiveChangeList) throws {
        guard try !isInFollowingFeed(post, author: author, of: list.viewer) else { return }
        list.changes.append(.postRemoved(post))
    }

    /// Whether what `user` does shows in the viewer's Following feed, if they follow it: theirs, or a followed user's.
    func feedShows(_ user: UserID, in list: LiveChangeList) throws -> Bool {
        try list.topics.contains(.feed) && (user == list.viewer || follows(list.viewer, user))
    }
}
