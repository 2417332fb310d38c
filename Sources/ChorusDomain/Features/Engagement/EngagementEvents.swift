import ChorusLog

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
    /// Whom the text mentions, resolved by the decision (``DecisionState/mentioned(in:by:in:)``).
    public var mentions: [UserID]
    public init(
        comment: CommentID, post: PostID, author: UserID, text: String, postAuthor: UserID? = nil,
        mentions: [UserID] = []
    ) {
        self.comment = comment
        self.post = post
        self.author = author
        self.text = text
        self.postAuthor = postAuthor
        self.mentions = mentions
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

/// Version 2 appends the post's author (version 1: `postAuthor` nil).
extension Liked: StoredEvent {
    static let typeName = "Liked"
    static let schemaVersion: UInt16 = 2
    var stream: StreamID { .post(post) }
    var domainEvent: DomainEvent { .liked(self) }

    func encode(to payload: inout PayloadWriter, keys: any PersonalDataKeys) throws {
        payload.write(user)
        payload.write(post)
        payload.write(postAuthor)
    }

    init(from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys) throws {
        self.init(
            user: try payload.read(UserID.self), post: try payload.read(PostID.self),
            postAuthor: version >= 2 ? try payload.readOptional(UserID.self) : nil)
    }

    func changeState(_ state: DecisionState, at position: LogPosition, in changes: inout DecisionState.ChangeList) {
        changes.put(state.likes, .init(user.rawValue, post.rawValue), since: position)
    }
}

/// Version 2 appends the post's author and the position of the like (version 1: both nil).
extension Unliked: StoredEvent {
    static let typeName = "Unliked"
    static let schemaVersion: UInt16 = 2
    var stream: StreamID { .post(post) }
    var domainEvent: DomainEvent { .unliked(self) }

    func encode(to payload: inout PayloadWriter, keys: any PersonalDataKeys) throws {
        payload.write(user)
        payload.write(post)
        payload.write(postAuthor)
        payload.write(likedAt)
    }

    init(from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys) throws {
        self.init(
            user: try payload.read(UserID.self), post: try payload.read(PostID.self),
            postAuthor: version >= 2 ? try payload.readOptional(UserID.self) : nil,
            likedAt: version >= 2 ? try payload.readOptionalPosition() : nil)
    }

    func changeState(_ state: DecisionState, at position: LogPosition, in changes: inout DecisionState.ChangeList) {
        changes.remove(state.likes, .init(user.rawValue, post.rawValue))
    }
}

extension Reposted: StoredEvent {
    static let typeName = "Reposted"
    static let schemaVersion: UInt16 = 1
    var stream: StreamID { .post(post) }
    var domainEvent: DomainEvent { .reposted(self) }

    func encode(to payload: inout PayloadWriter, keys: any PersonalDataKeys) throws {
        payload.write(user)
        payload.write(post)
        payload.write(postAuthor)
    }

    init(from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys) throws {
        self.init(
            user: try payload.read(UserID.self), post: try payload.read(PostID.self),
            postAuthor: try payload.read(UserID.self))
    }

    func changeState(_ state: DecisionState, at position: LogPosition, in changes: inout DecisionState.ChangeList) {
        changes.put(state.shares, .init(post.rawValue, user.rawValue), since: position)
    }
}

extension Unreposted: StoredEvent {
    static let typeName = "Unreposted"
    static let schemaVersion: UInt16 = 1
    var stream: StreamID { .post(post) }
    var domainEvent: DomainEvent { .unreposted(self) }

    func encode(to payload: inout PayloadWriter, keys: any PersonalDataKeys) throws {
        payload.write(user)
        payload.write(post)
        payload.write(postAuthor)
        payload.write(repostedAt.rawValue)
    }

    init(from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys) throws {
        self.init(
            user: try payload.read(UserID.self), post: try payload.read(PostID.self),
            postAuthor: try payload.read(UserID.self), repostedAt: LogPosition(try payload.readUInt64()))
    }

    func changeState(_ state: DecisionState, at position: LogPosition, in changes: inout DecisionState.ChangeList) {
        changes.remove(state.shares, .init(post.rawValue, user.rawValue))
    }
}

/// Version 2 appends the post's author (version 1: nil); version 3 seals the text under the comment's author's key,
/// after the other fields; version 4 adds whom it mentions before the sealed text.
extension CommentAdded: StoredEvent {
    static let typeName = "CommentAdded"
    static let schemaVersion: UInt16 = 4
    var stream: StreamID { .post(post) }
    var domainEvent: DomainEvent { .commentAdded(self) }

    func encode(to payload: inout PayloadWriter, keys: any PersonalDataKeys) throws {
        payload.write(comment)
        payload.write(post)
        payload.write(author)
        payload.write(postAuthor)
        payload.write(mentions: mentions)
        try payload.writeSealed(by: author, in: Self.typeName, keys: keys) { $0.write(text) }
    }

    init(from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys) throws {
        let comment = try payload.read(CommentID.self)
        let post = try payload.read(PostID.self)
        let author = try payload.read(UserID.self)
        guard version >= 3 else {
            let text = try payload.readString()
            self.init(
                comment: comment, post: post, author: author, text: text,
                postAuthor: version >= 2 ? try payload.readOptional(UserID.self) : nil)
            return
        }
        let postAuthor = try payload.readOptional(UserID.self)
        let mentions = version >= 4 ? try payload.readMentions() : []
        var fields = try payload.openSealed(by: author, in: Self.typeName, keys: keys)
        self.init(
            comment: comment, post: post, author: author, text: try fields?.readString() ?? "", postAuthor: postAuthor,
            mentions: mentions)
        try fields?.finish()
    }

    func changeState(_ state: DecisionState, at position: LogPosition, in changes: inout DecisionState.ChangeList) {
        let stored = DecisionState.CommentState(post: post, author: author, commentedAt: position, deleted: false)
        changes.put(state.comments, .init(comment.rawValue), stored.encoded())
    }
}

extension CommentDeleted: StoredEvent {
    static let typeName = "CommentDeleted"
    static let schemaVersion: UInt16 = 1
    var stream: StreamID { .post(post) }
    var domainEvent: DomainEvent { .commentDeleted(self) }

    func encode(to payload: inout PayloadWriter, keys: any PersonalDataKeys) throws {
        payload.write(comment)
        payload.write(post)
        payload.write(author)
        payload.write(postAuthor)
        payload.write(commentedAt.rawValue)
    }

    init(from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys) throws {
        self.init(
            comment: try payload.read(CommentID.self), post: try payload.read(PostID.self),
            author: try payload.read(UserID.self), postAuthor: try payload.read(UserID.self),
            commentedAt: LogPosition(try payload.readUInt64()))
    }

    func changeState(_ state: DecisionState, at position: LogPosition, in changes: inout DecisionState.ChangeList) {
        let stored = DecisionState.CommentState(post: post, author: author, commentedAt: commentedAt, deleted: true)
        changes.put(state.comments, .init(comment.rawValue), stored.encoded())
    }
}
