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

/// Version 2 seals the caption and the text under the author's key, after the other fields; version 1 holds them in
/// plain.
extension PostCreated: StoredEvent {
    static let typeName = "PostCreated"
    static let schemaVersion: UInt16 = 2
    var stream: StreamID { .post(post) }
    var domainEvent: DomainEvent { .postCreated(self) }

    func encode(to payload: inout PayloadWriter, keys: any PersonalDataKeys) throws {
        payload.write(post)
        payload.write(author)
        payload.write(image)
        payload.write(repostOf)
        try payload.writeSealed(by: author, in: Self.typeName, keys: keys) {
            $0.write(caption)
            $0.write(text)
        }
    }

    init(from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys) throws {
        let post = try payload.read(PostID.self)
        let author = try payload.read(UserID.self)
        guard version >= 2 else {
            self.init(
                post: post, author: author, caption: try payload.readString(), text: try payload.readString(),
                image: try payload.readOptional(MediaID.self), repostOf: try payload.readOptional(PostID.self))
            return
        }
        let image = try payload.readOptional(MediaID.self)
        let repostOf = try payload.readOptional(PostID.self)
        var fields = try payload.openSealed(by: author, in: Self.typeName, keys: keys)
        self.init(
            post: post, author: author, caption: try fields?.readString() ?? "", text: try fields?.readString() ?? "",
            image: image, repostOf: repostOf)
        try fields?.finish()
    }

    func changeState(_ state: DecisionState, at position: LogPosition, in changes: inout DecisionState.ChangeList) {
        let stored = DecisionState.PostState(
            author: author, textMayBeEmpty: image != nil || repostOf != nil, deleted: false, postedAt: position,
            repostOf: repostOf)
        changes.put(state.posts, .init(post.rawValue), stored.encoded())
        if DecisionState.isPlainRepost(self) {
            changes.put(state.reposts, .init(repostOf!.rawValue, post.rawValue), [])
        }
    }
}

/// Version 2 seals the caption and the text as ``PostCreated`` 2 does; version 1 holds them in plain.
extension PostEdited: StoredEvent {
    static let typeName = "PostEdited"
    static let schemaVersion: UInt16 = 2
    var stream: StreamID { .post(post) }
    var domainEvent: DomainEvent { .postEdited(self) }

    func encode(to payload: inout PayloadWriter, keys: any PersonalDataKeys) throws {
        payload.write(post)
        payload.write(author)
        try payload.writeSealed(by: author, in: Self.typeName, keys: keys) {
            $0.write(caption)
            $0.write(text)
        }
    }

    init(from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys) throws {
        let post = try payload.read(PostID.self)
        let author = try payload.read(UserID.self)
        guard version >= 2 else {
            self.init(
                post: post, author: author, caption: try payload.readOptionalString(),
                text: try payload.readOptionalString())
            return
        }
        var fields = try payload.openSealed(by: author, in: Self.typeName, keys: keys)
        self.init(
            post: post, author: author, caption: try fields?.readOptionalString(),
            text: try fields?.readOptionalString())
        try fields?.finish()
    }
}

extension PostDeleted: StoredEvent {
    static let typeName = "PostDeleted"
    static let schemaVersion: UInt16 = 1
    var stream: StreamID { .post(post) }
    var domainEvent: DomainEvent { .postDeleted(self) }

    func encode(to payload: inout PayloadWriter, keys: any PersonalDataKeys) throws {
        payload.write(post)
        payload.write(author)
        payload.write(postedAt.rawValue)
        payload.write(repostOf)
    }

    init(from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys) throws {
        self.init(
            post: try payload.read(PostID.self), author: try payload.read(UserID.self),
            postedAt: LogPosition(try payload.readUInt64()), repostOf: try payload.readOptional(PostID.self))
    }

    func changeState(_ state: DecisionState, at position: LogPosition, in changes: inout DecisionState.ChangeList) {
        let stored = DecisionState.PostState(
            author: author, textMayBeEmpty: false, deleted: true, postedAt: postedAt, repostOf: repostOf)
        changes.put(state.posts, .init(post.rawValue), stored.encoded())
        if let original = repostOf { changes.remove(state.reposts, .init(original.rawValue, post.rawValue)) }
    }
}
