import ChorusDomain
import ChorusLog
import ChorusStorage

/// A post as a screen shows it, with its author's profile as of the view and the viewer's like. Images are media ids;
/// the API makes URLs of them.
public struct Post: Sendable, Hashable {
    public let id: PostID
    public let author: UserSummary
    public let caption: String
    public let text: String
    public let image: MediaID?
    /// The reposted post (shown without the post it in turn reposts).
    public let repost: Repost?
    public let createdAt: EventTime
    /// When its author last changed the caption or text; nil if never.
    public let editedAt: EventTime?
    public let likes: UInt64
    public let comments: UInt64
    /// Whether the viewer likes it.
    public let hasLiked: Bool

    /// Boxes the reposted post, which a struct cannot hold directly.
    public indirect enum Repost: Sendable, Hashable { case of(Post) }

    public var repostOf: Post? {
        guard case .of(let post)? = repost else { return nil }
        return post
    }
}

/// A ``Post`` read in place, lent to a closure while its snapshot lasts (see ``StoredText``): for answers written out
/// inside the snapshot without making a string of every field. ``Post/init(_:)`` copies it.
public struct StoredPost: ~Copyable {
    /// What a post and the post it reposts both show.
    public struct Fields: ~Copyable {
        public let id: StoredText
        public let author: StoredUserSummary
        public let caption: StoredText
        public let text: StoredText
        /// A media id.
        public let image: StoredText?
        public let createdAt: EventTime
        public let editedAt: EventTime?
        public let likes: UInt64
        public let comments: UInt64
        public let hasLiked: Bool
    }

    public let post: Fields
    /// The reposted post (shown without the post it in turn reposts).
    public let repostOf: Fields?
}

extension Post {
    /// The copy of a post read in place.
    public init(_ stored: borrowing StoredPost) {
        let repost: Repost? =
            switch stored.repostOf {
            case .some(let original): .of(Post(original, repost: nil))
            case .none: nil
            }
        self.init(stored.post, repost: repost)
    }

    private init(_ fields: borrowing StoredPost.Fields, repost: Repost?) {
        let image: MediaID? =
            switch fields.image {
            case .some(let image): MediaID(unchecked: image.string)
            case .none: nil
            }
        self.init(
            id: PostID(unchecked: fields.id.string), author: UserSummary(fields.author), caption: fields.caption.string,
            text: fields.text.string, image: image, repost: repost, createdAt: fields.createdAt,
            editedAt: fields.editedAt, likes: fields.likes, comments: fields.comments, hasLiked: fields.hasLiked)
    }
}

/// Where a post's bytes are in the snapshot: what queries find, and lend out as a ``StoredPost``.
struct PostInPlace {
    struct Fields {
        let id: UnsafeRawBufferPointer
        let author: SummaryInPlace
        let caption: UnsafeRawBufferPointer
        let text: UnsafeRawBufferPointer
        let image: UnsafeRawBufferPointer?
        let createdAt: EventTime
        let editedAt: EventTime?
        let likes: UInt64
        let comments: UInt64
        let hasLiked: Bool

        func lent() -> StoredPost.Fields {
            StoredPost.Fields(
                id: StoredText(id), author: author.lent(), caption: StoredText(caption), text: StoredText(text),
                image: image.map(StoredText.init), createdAt: createdAt, editedAt: editedAt, likes: likes,
                comments: comments, hasLiked: hasLiked)
        }
    }

    let post: Fields
    /// The post it reposts, unless that one is gone or hidden from the viewer.
    let repostOf: Fields?
    /// Whether it reposts a post, shown or not.
    let isRepost: Bool

    func lent() -> StoredPost {
        let original: StoredPost.Fields? =
            switch repostOf {
            case .some(let fields): fields.lent()
            case .none: nil
            }
        return StoredPost(post: post.lent(), repostOf: original)
    }
}

extension ReadView {
    public func post(_ post: PostID, viewer: UserID?) throws -> Post? {
        try withPost(post, viewer: viewer) { Post($0) }
    }

    /// Lends `body` the post read in place; nil, without calling `body`, when there is no such post.
    public func withPost<R>(_ post: PostID, viewer: UserID?, _ body: (borrowing StoredPost) throws -> R) throws -> R? {
        // The key as the table holds it, so that the answer's id lies in the snapshot too.
        let key = ProjectionKey(post).bytes
        var found: UnsafeRawBufferPointer?
        try transaction.scan(models.posts.posts, from: key) { stored, _ in
            if stored.elementsEqual(key) { found = stored }
            return false
        }
        guard let found, let post = try postInPlace(at: found, viewer: viewer) else { return nil }
        return try body(post.lent())
    }

    /// The posts tab, newest first, only the posts of `kind`; nil for an unknown user.
    public func posts(by user: UserID, kind: PostKind = .all, viewer: UserID?, page: PageRequest) throws -> Page<Post>?
    {
        try Page(copying: { try posts(by: user, kind: kind, viewer: viewer, page: page, $0) })
    }

    /// Lends `each` the posts of the posts tab of `kind`, newest first, read in place; nil for an unknown user.
    public func posts(
        by user: UserID, kind: PostKind = .all, viewer: UserID?, page: PageRequest,
        _ each: (borrowing StoredPost) throws -> Void
    ) throws -> PageEnd? {
        guard try profileRecord(user) != nil, try !isBlocked(viewer, by: user) else { return nil }
        return try postPage(models.posts.userPosts, owner: user, kind: kind, viewer: viewer, page: page, each)
    }

    /// The likes tab: posts `user` liked, most recently liked first; nil for an unknown user.
    public func likedPosts(by user: UserID, viewer: UserID?, page: PageRequest) throws -> Page<Post>? {
        try Page(copying: { try likedPosts(by: user, viewer: viewer, page: page, $0) })
    }

    /// Lends `each` the posts of the likes tab, read in place; nil for an unknown user.
    public func likedPosts(
        by user: UserID, viewer: UserID?, page: PageRequest, _ each: (borrowing StoredPost) throws -> Void
    ) throws -> PageEnd? {
        guard try profileRecord(user) != nil, try !isBlocked(viewer, by: user) else { return nil }
        return try postPage(models.posts.userLikes, owner: user, kind: .all, viewer: viewer, page: page, each)
    }

    // MARK: Joins, for the other models' queries

    func postRecord(_ post: PostID) throws -> PostRecord? {
        try transaction.value(for: ProjectionKey(post).bytes, in: models.posts.posts).map(PostRecord.init(decoding:))
    }

    /// The post whose id is `id`, a buffer in the snapshot (a key or value of a table), with the post it reposts; nil
    /// when its author is hidden from `viewer` (blocked either way, or with `muting`, muted), and the reposted post
    /// left out when its author is.
    func postInPlace(at id: UnsafeRawBufferPointer, viewer: UserID?, muting: Bool = false) throws -> PostInPlace? {
        guard let (post, repostOf) = try fieldsInPlace(at: id, viewer: viewer, muting: muting) else { return nil }
        return PostInPlace(
            post: post,
            repostOf: try repostOf.flatMap { try fieldsInPlace(at: $0, viewer: viewer, muting: muting)?.fields },
            isRepost: repostOf != nil)
    }

    private func fieldsInPlace(at id: UnsafeRawBufferPointer, viewer: UserID?, muting: Bool) throws -> (
        fields: PostInPlace.Fields, repostOf: UnsafeRawBufferPointer?
    )? {
        guard let stored = try transaction.valueInPlace(for: id, in: models.posts.posts) else { return nil }
        let record = try PostRecord.InPlace(stored)
        // Most viewers hide no one: then no author need be made a string.
        if try hidesAnyone(from: viewer), try hides(bytes: record.author, from: viewer, muting: muting) {
            return nil
        }
        let counts = try postCountsInPlace(of: id)
        var hasLiked = false
        // Most posts have no likes, and then no one need be looked up.
        if let viewer, counts.likes > 0 {
            var like = ProjectionKey(bytes: id)
            like.append(viewer)
            hasLiked = try transaction.withValue(for: like.bytes, in: models.posts.likes) { $0 != nil }
        }
        guard let author = try summaryInPlace(of: record.author) else {
            throw ProjectionError.inconsistent("no profile for the author of \(String(copying: id))")
        }
        let fields = PostInPlace.Fields(
            id: id, author: author, caption: record.caption, text: record.text, image: record.image,
            createdAt: record.createdAt, editedAt: record.editedAt, likes: counts.likes, comments: counts.comments,
            hasLiked: hasLiked)
        return (fields, record.repostOf)
    }

    /// A page of `table` (owner, position → post id), its posts lent to `each` in place.
    private func postPage(
        _ table: StoreTable, owner: UserID, kind: PostKind, viewer: UserID?, page: PageRequest,
        _ each: (borrowing StoredPost) throws -> Void
    ) throws -> PageEnd {
        try transaction.forEachInPage(table, prefix: ProjectionKey(owner).prefix(), order: .newestFirst, request: page)
        {
            _, value in
            guard let post = try postInPlace(at: value, viewer: viewer), kind.admits(post) else { return false }
            try each(post.lent())
            return true
        }
    }
}

/// Which posts of a list a screen asks for: the profile tabs (tweets, retweets, the media grid) and the feeds of
/// images only. A page of a kind reads past the posts of other kinds to fill itself.
public enum PostKind: String, Sendable, CaseIterable {
    case all
    /// Posts that repost nothing.
    case original
    /// Posts that repost another, plain or quoting.
    case reposts
    /// Posts with an image of their own.
    case media

    func admits(_ post: PostInPlace) -> Bool {
        switch self {
        case .all: true
        case .original: !post.isRepost
        case .reposts: post.isRepost
        case .media: post.post.image != nil
        }
    }
}

extension Page where Item == Post {
    /// The copies of the posts a query reads in place; nil when it is.
    init?(copying read: ((borrowing StoredPost) throws -> Void) throws -> PageEnd?) rethrows {
        var items: [Post] = []
        guard let end = try read({ items.append(Post($0)) }) else { return nil }
        self.init(items: items, nextCursor: end.nextCursor)
    }

    /// The copies of the posts a query reads in place.
    init(copying read: ((borrowing StoredPost) throws -> Void) throws -> PageEnd) rethrows {
        var items: [Post] = []
        let end = try read { items.append(Post($0)) }
        self.init(items: items, nextCursor: end.nextCursor)
    }
}
