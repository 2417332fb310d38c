import ChorusDomain
import ChorusLog

extension ReadView {
    func addChanges(of event: Liked, to list: inout LiveChangeList) throws {
        try addLikes(event.post, to: &list)
        try addNotification(to: &list)
    }

    func addChanges(of event: Unliked, to list: inout LiveChangeList) throws {
        try addLikes(event.post, to: &list)
    }

    /// Neither on a post hidden from the viewer, nor by someone hidden from them (a block either way), as the post's
    /// comments read over REST.
    func addChanges(of event: CommentAdded, to list: inout LiveChangeList) throws {
        if list.topics.contains(.post(event.post)), try !isHidden(event.post, from: list.viewer),
            try !hides(event.author, from: list.viewer), let author = try userSummary(event.author)
        {
            let comment = Comment(
                id: event.comment, postID: event.post, author: author, text: event.text, createdAt: list.recordedAt,
                mentions: try visibleSummaries(of: event.mentions, viewer: list.viewer))
            list.changes.append(.comment(comment))
        }
        try addNotification(to: &list)
    }

    func addChanges(of event: CommentDeleted, to list: inout LiveChangeList) throws {
        guard list.topics.contains(.post(event.post)), try !isHidden(event.post, from: list.viewer) else { return }
        list.changes.append(.commentRemoved(post: event.post, comment: event.comment))
    }

    private func addLikes(_ post: PostID, to list: inout LiveChangeList) throws {
        guard list.topics.contains(.post(post)), let count = try withPost(post, viewer: list.viewer, { $0.post.likes })
        else { return }
        list.changes.append(.likes(post: post, count: count))
    }
}
