import ChorusDomain
import ChorusLog

extension ReadView {
    /// A post in the feed, or else on a tag's topic, and the viewer's notification if it mentions them.
    func addChanges(of event: PostCreated, to list: inout LiveChangeList) throws {
        if try feedShows(event.author, in: list), try postRecord(event.post) != nil {
            list.changes.append(.post(event.post, at: list.position))
        } else if Hashtags.tags(in: event.caption, event.text).contains(where: { list.topics.contains(.hashtag($0)) }) {
            list.changes.append(.taggedPost(event.post))
        }
        if event.mentions.all.contains(list.viewer) { try addNotification(to: &list) }
    }

    /// The viewer's notification if the edit mentions them first.
    func addChanges(of event: PostEdited, to list: inout LiveChangeList) throws {
        guard event.captionMentions?.contains(list.viewer) == true || event.textMentions?.contains(list.viewer) == true
        else { return }
        try addNotification(to: &list)
    }

    func addChanges(of event: PostDeleted, to list: inout LiveChangeList) throws {
        guard try feedShows(event.author, in: list) else { return }
        list.changes.append(.postRemoved(event.post))
    }

    func addChanges(of event: Reposted, to list: inout LiveChangeList) throws {
        if try feedShows(event.user, in: list) { list.changes.append(.post(event.post, at: list.position)) }
        try addReposts(event.post, to: &list)
        try addNotification(to: &list)
    }

    func addChanges(of event: Unreposted, to list: inout LiveChangeList) throws {
        if try feedShows(event.user, in: list) { try addRemoved(event.post, author: event.postAuthor, to: &list) }
        try addReposts(event.post, to: &list)
    }

    private func addReposts(_ post: PostID, to list: inout LiveChangeList) throws {
        guard list.topics.contains(.post(post)),
            let count = try withPost(post, viewer: list.viewer, { $0.post.reposts })
        else { return }
        list.changes.append(.reposts(post: post, count: count))
    }
}
