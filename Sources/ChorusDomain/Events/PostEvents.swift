import ChorusLog

public struct PostCreated: Sendable, Hashable {
    public var post: PostID
    public var author: UserID
    public var caption: String
    public var text: String
    public var image: MediaID?
    public var repostOf: PostID?
    public init(post: PostID, author: UserID, caption: String, text: String, image: MediaID?, repostOf: PostID?) {
        self.post = post
        self.author = author
        self.caption = caption
        self.text = text
        self.image = image
        self.repostOf = repostOf
    }
}

/// The author changed a post's caption or text; only the fields that changed are present. The time of the edit is the
/// event's.
public struct PostEdited: Sendable, Hashable {
    public var post: PostID
    public var author: UserID
    public var caption: String?
    public var text: String?
    public init(post: PostID, author: UserID, caption: String?, text: String?) {
        self.post = post
        self.author = author
        self.caption = caption
        self.text = text
    }
}

/// A post was deleted: by its author, or with the post it plainly reposted. `author`, `postedAt` (the position of its
/// ``PostCreated``) and `repostOf` are facts of the decision, recorded so that whoever follows the log can take out
/// everything the post put in without looking it up.
public struct PostDeleted: Sendable, Hashable {
    public var post: PostID
    public var author: UserID
    public var postedAt: LogPosition
    /// The post it reposted, if it was a repost.
    public var repostOf: PostID?
    public init(post: PostID, author: UserID, postedAt: LogPosition, repostOf: PostID?) {
        self.post = post
        self.author = author
        self.postedAt = postedAt
        self.repostOf = repostOf
    }
}

/// `postAuthor`, the author of the liked post, is a fact of the decision (a post's author never changes), recorded so
/// that whoever follows the log can notify the author without looking the post up. Nil only in events recorded
/// before schema version 2, which did not carry it.
public struct Liked: Sendable, Hashable {
    public var user: UserID
    public var post: PostID
    public var postAuthor: UserID?
    public init(user: UserID, post: PostID, postAuthor: UserID?) {
        self.user = user
        self.post = post
        self.postAuthor = postAuthor
    }
}

/// `postAuthor` as in ``Liked``; `likedAt`, the position of the like this takes back, so that whoever follows the
/// log can take back what that like did without looking it up. Both nil only in events recorded before schema
/// version 2.
public struct Unliked: Sendable, Hashable {
    public var user: UserID
    public var post: PostID
    public var postAuthor: UserID?
    public var likedAt: LogPosition?
    public init(user: UserID, post: PostID, postAuthor: UserID?, likedAt: LogPosition?) {
        self.user = user
        self.post = post
        self.postAuthor = postAuthor
        self.likedAt = likedAt
    }
}

/// A plain repost: `user` shares `post` (always an original, never a plain repost) with their followers, who see it in
/// their feeds as that post, reposted by `user`. `postAuthor` as in ``Liked``.
public struct Reposted: Sendable, Hashable {
    public var user: UserID
    public var post: PostID
    public var postAuthor: UserID
    public init(user: UserID, post: PostID, postAuthor: UserID) {
        self.user = user
        self.post = post
        self.postAuthor = postAuthor
    }
}

/// Takes a plain repost back: it leaves every feed, tab and notification it was in. `repostedAt`, the position of the
/// ``Reposted`` this takes back, so that whoever follows the log can find what it put in without looking it up.
public struct Unreposted: Sendable, Hashable {
    public var user: UserID
    public var post: PostID
    public var postAuthor: UserID
    public var repostedAt: LogPosition
    public init(user: UserID, post: PostID, postAuthor: UserID, repostedAt: LogPosition) {
        self.user = user
        self.post = post
        self.postAuthor = postAuthor
        self.repostedAt = repostedAt
    }
}

/// `author` wrote the comment; `postAuthor` (as in ``Liked``) wrote the post, and is filled in by the decision.
public struct CommentAdded: Sendable, Hashable {
    public var comment: CommentID
    public var post: PostID
    public var author: UserID
    public var text: String
    public var postAuthor: UserID?
    public init(comment: CommentID, post: PostID, author: UserID, text: String, postAuthor: UserID? = nil) {
        self.comment = comment
        self.post = post
        self.author = author
        self.text = text
        self.postAuthor = postAuthor
    }
}

/// A comment was deleted, by its author or by the post's author. `author` wrote the comment, `postAuthor` the post, and
/// `commentedAt` is the position of its ``CommentAdded``: facts of the decision, as in ``PostDeleted``.
public struct CommentDeleted: Sendable, Hashable {
    public var comment: CommentID
    public var post: PostID
    public var author: UserID
    public var postAuthor: UserID
    public var commentedAt: LogPosition
    public init(comment: CommentID, post: PostID, author: UserID, postAuthor: UserID, commentedAt: LogPosition) {
        self.comment = comment
        self.post = post
        self.author = author
        self.postAuthor = postAuthor
        self.commentedAt = commentedAt
    }
}
