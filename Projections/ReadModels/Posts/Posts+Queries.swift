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
    /// Its images, in order, with their alt texts.
    public let media: [PostImage]
    /// The reposted post (shown without the post it in turn reposts).
    public let repost: Repost?
    public let createdAt: EventTime
    /// When its author last changed the caption or text; nil if never.
    public let editedAt: EventTime?
    public let likes: UInt64
    public let comments: UInt64
    /// Whether the viewer likes it.
    public let hasLiked: Bool
    /// How many users repost it plainly.
    public let reposts: UInt64
    /// Whether the viewer reposted it plainly.
    public let hasReposted: Bool
    /// Whether the viewer saved it for later.
    public let hasBookmarked: Bool
    /// Who may comment besides its author.
    public let replies: ReplyPolicy
    /// Whom its caption and text mention, as they are now, but those deleted or hidden from the viewer.
    public let mentions: [UserSummary]
    /// In a feed or tab, who plainly reposted it at the place it is shown (the newest repost the list holds); nil
    /// where it is shown as posted.
    public let repostedBy: UserSummary?

    /// Boxes the reposted post, which a struct cannot hold directly.
    public indirect enum Repost: Sendable, Hashable { case of(Post) }

    public var repostOf: Post? {
        guard case .of(let post)? = repost else { return nil }
        return post
    }

    /// The tags of its caption and text (``Hashtags``).
    public var hashtags: [String] { Hashtags.tags(in: caption, text) }
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
        public let media: StoredImages
        public let createdAt: EventTime
        public let editedAt: EventTime?
        public let likes: UInt64
        public let comments: UInt64
        public let hasLiked: Bool
        public let reposts: UInt64
        public let hasReposted: Bool
        public let hasBookmarked: Bool
        public let replies: ReplyPolicy
        public let mentions: [UserSummary]

        /// The tags of its caption and text (``Hashtags``); strings are made only of a text with a `#`.
        public var hashtags: [String] {
            let mark = UInt8(ascii: "#")
            guard caption.contains(byte: mark) || text.contains(byte: mark) else { return [] }
            return Hashtags.tags(in: caption.string, text.string)
        }
    }

    public let post: Fields
    /// The reposted post (shown without the post it in turn reposts).
    public let repostOf: Fields?
    /// Who plainly reposted it at the place a feed or tab shows it (see ``Post/repostedBy``).
    public let repostedBy: StoredUserSummary?
}

extension Post {
    /// The copy of a post read in place.
    public init(_ stored: borrowing StoredPost) {
        let repost: Repost? =
            switch stored.repostOf {
            case .some(let original): .of(Post(original, repost: nil, repostedBy: nil))
            case .none: nil
            }
        let repostedBy: UserSummary? =
            switch stored.repostedBy {
            case .some(let user): UserSummary(user)
            case .none: nil
            }
        self.init(stored.post, repost: repost, repostedBy: repostedBy)
    }

    private init(_ fields: borrowing StoredPost.Fields, repost: Repost?, repostedBy: UserSummary?) {
        self.init(
            id: PostID(unchecked: fields.id.string), author: UserSummary(fields.author), caption: fields.caption.string,
            text: fields.text.string, media: fields.media.copies(), repost: repost, createdAt: fields.createdAt,
            editedAt: fields.editedAt, likes: fields.likes, comments: fields.comments, hasLiked: fields.hasLiked,
            reposts: fields.reposts, hasReposted: fields.hasReposted, hasBookmarked: fields.hasBookmarked,
            replies: fields.replies, mentions: fields.mentions, repostedBy: repostedBy)
    }
}

/// Where a post's bytes are in the snapshot: what queries find, and lend out as a ``StoredPost``.
struct PostInPlace {
    struct Fields {
        let id: UnsafeRawBufferPointer
        let author: SummaryInPlace
        let caption: UnsafeRawBufferPointer
        let text: UnsafeRawBufferPointer
        let media: UnsafeRawBufferPointer
        let createdAt: EventTime
        let editedAt: EventTime?
        let likes: UInt64
        let comments: UInt64
        let hasLiked: Bool
        let reposts: UInt64
        let hasReposted: Bool
        let hasBookmarked: Bool
        let replies: ReplyPolicy
        let mentions: [UserSummary]

        func lent() -> StoredPost.Fields {
            StoredPost.Fields(
                id: StoredText(id), author: author.lent(), caption: StoredText(caption), text: StoredText(text),
                media: StoredImages(media), createdAt: createdAt, editedAt: editedAt, likes: likes,
                comments: comments, hasLiked: hasLiked, reposts: reposts, hasReposted: hasReposted,
                hasBookmarked: hasBookmarked, replies: replies, mentions: mentions)
        }
    }

    let post: Fields
    /// The post it reposts, unless that one is gone or hidden from the viewer.
    let repostOf: Fields?
    /// Whether it reposts a post, shown or not.
    let isRepost: Bool
    /// Who plainly reposted it where a list shows it; nil where it is shown as posted.
    var repostedBy: SummaryInPlace?

    func lent() -> StoredPost {
        let original: StoredPost.Fields? =
            switch repostOf {
            case .some(let fields): fields.lent()
            case .none: nil
            }
        return StoredPost(post: post.lent(), repostOf: original, repostedBy: repostedBy?.lent())
    }
}

extension ReadView {
    public func post(_ post: PostID, viewer: UserID?) throws -> Post? {
        try withPost(post, viewer: viewer) { Post($0) }
    }

    /// Lends `body` the post read in place; nil, without calling `body`, when there is no such post.
    public func withPost<R>(_ post: PostID, viewer: UserID?, _ body: (borrowing StoredPost) throws -> R) throws -> R? {
        guard let found = try storedID(of: post), let post = try postInPlace(at: found, viewer: viewer) else {
            return nil
        }
        return try body(post.lent())
    }

    /// Throws ``DomainError/Code/privateAccount`` when `post` stands and its author is a private account that `viewer`
    /// neither is nor follows: the post, its comments and its live topic answer so.
    public func requireReadable(_ post: PostID, by viewer: UserID?) throws {
        // A post whose author is hidden from the viewer otherwise (a block) is not there for them at all.
        guard let author = try postRecord(post)?.author, try !hides(author, from: viewer),
            let record = try profileRecord(author)
        else { return }
        try requireFollower(viewer, ofPrivate: record, author)
    }

    /// Whether `post` stands but is hidden from `viewer`: its author blocked either way, suspended, or a private account
    /// the viewer does not follow.
    public func isHidden(_ post: PostID, from viewer: UserID) throws -> Bool {
        guard try storedID(of: post) != nil else { return false }
        return try withPost(post, viewer: viewer, { _ in }) == nil
    }

    /// The post's id as the posts table holds it as a key, so that an answer's id lies in the snapshot too; nil when
    /// there is no such post.
    func storedID(of post: PostID) throws -> UnsafeRawBufferPointer? {
        try transaction.storedKey(ProjectionKey(post).bytes, in: models.posts.posts)
    }

    /// The posts tab, newest first, only the posts of `kind`; nil for an unknown user. Throws
    /// ``DomainError/Code/privateAccount`` for a private account's, but to the user and their followers (so do the
    /// likes tab and the lists of followers and following).
    public func posts(by user: UserID, kind: PostKind = .all, viewer: UserID?, page: PageRequest) throws -> Page<Post>?
    {
        try Page(copying: { try posts(by: user, kind: kind, viewer: viewer, page: page, $0) })
    }

    /// Lends `each` the posts of the posts tab of `kind`, newest first, read in place; nil for an unknown user.
    public func posts(
        by user: UserID, kind: PostKind = .all, viewer: UserID?, page: PageRequest,
        _ each: (borrowing StoredPost) throws -> Void
    ) throws -> PageEnd? {
        guard let record = try profileRecord(user), try !isBlocked(viewer, by: user) else { return nil }
        try requireFollower(viewer, ofPrivate: record, user)
        let prefix = ProjectionKey(user).prefix()
        return try transaction.forEachInPage(
            models.posts.userPosts, prefix: prefix, order: .newestFirst, request: page
        ) { key, value in
            let position = ProjectionKey.position(in: key, at: prefix.count)
            guard let post = try feedEntry(at: position, post: value, viewer: viewer, scope: .user(user), kind: kind)
            else { return false }
            try each(post.lent())
            return true
        }
    }

    /// The likes tab: posts `user` liked, most recently liked first; nil for an unknown user.
    public func likedPosts(by user: UserID, viewer: UserID?, page: PageRequest) throws -> Page<Post>? {
        try Page(copying: { try likedPosts(by: user, viewer: viewer, page: page, $0) })
    }

    /// Lends `each` the posts of the likes tab, read in place; nil for an unknown user.
    public func likedPosts(
        by user: UserID, viewer: UserID?, page: PageRequest, _ each: (borrowing StoredPost) throws -> Void
    ) throws -> PageEnd? {
        guard let record = try profileRecord(user), try !isBlocked(viewer, by: user) else { return nil }
        try requireFollower(viewer, ofPrivate: record, user)
        let prefix = ProjectionKey(user).prefix()
        return try transaction.forEachInPage(
            models.posts.userLikes, prefix: prefix, order: .newestFirst, request: page
        ) { _, value in
            guard let post = try postInPlace(at: value, viewer: viewer) else { return false }
            try each(post.lent())
            return true
        }
    }

    // MARK: Joins, for the other models' queries

    /// The post a feed or tab shows at `position`, which holds `id` (a buffer in the snapshot): as posted there, or
    /// with `repostedBy` when a plain repost put it there. Nil when hidden from the viewer (its author, or the user who
    /// reposted it, blocked either way, or in a feed muted), when it is not of `kind`, and when the list shows it at a
    /// newer place: a list shows each post once, at the newest repost of it by someone in `scope` (or as posted when
    /// there is none); a list of posts as posted (`original`, `media`) shows no reposts, so none hides a post there.
    func feedEntry(
        at position: LogPosition, post id: UnsafeRawBufferPointer, viewer: UserID?, scope: FeedScope,
        kind: PostKind = .all
    ) throws -> PostInPlace? {
        guard var post = try postInPlace(at: id, viewer: viewer, muting: scope.mutes) else { return nil }
        // Most posts are not reposted, and then nothing need be looked up.
        guard post.post.reposts > 0 else { return kind.admits(post) ? post : nil }
        var here = ProjectionKey(bytes: id)
        here.append(position)
        // The reposter's id as the table holds it, in the snapshot.
        let reposter = try here.bytes.withUnsafeBytes {
            try transaction.valueInPlace(for: $0, in: models.posts.postReposts)
        }
        if let reposter {
            guard let summary = try shownReposter(reposter, to: viewer, muting: scope.mutes) else { return nil }
            post.repostedBy = summary
        }
        // A list of a kind holds only its kind's places: one of posts as posted has no reposts to show it higher.
        guard kind.admits(post) else { return nil }
        guard kind.admitsReposts else { return post }
        var newer = false
        var next = ProjectionKey(bytes: id)
        next.append(position.next)
        try transaction.scan(models.posts.postReposts, within: Array(id) + [0], from: next.bytes, direction: .forward) {
            key, reposter in
            // Keys of this post: its id, NUL, a position.
            guard key.count == id.count + 9, key.starts(withBytes: id), key[id.count] == 0 else { return false }
            newer =
                try scope.includes(reposter, in: self)
                && shownReposter(reposter, to: viewer, muting: scope.mutes) != nil
            return !newer
        }
        return newer ? nil : post
    }

    /// The summary of the user whose id is `reposter` (in the snapshot), unless their reposts are hidden from `viewer`
    /// as their posts are: blocked either way, muted (`muting`), or a private account the viewer does not follow.
    private func shownReposter(_ reposter: UnsafeRawBufferPointer, to viewer: UserID?, muting: Bool) throws
        -> SummaryInPlace?
    {
        guard try !hides(bytes: reposter, from: viewer, muting: muting), let summary = try summaryInPlace(of: reposter),
            try !privacyHides(summary, from: viewer)
        else { return nil }
        return summary
    }

    func postRecord(_ post: PostID) throws -> PostRecord? {
        try transaction.value(for: ProjectionKey(post).bytes, in: models.posts.posts).map(PostRecord.init(decoding:))
    }

    /// The post whose id is `id`, a buffer in the snapshot (a key or value of a table), with the post it reposts; nil
    /// when its author is hidden from `viewer` (blocked either way, with `muting` muted, or a private account the
    /// viewer does not follow), and the reposted post left out when its author is.
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
        guard let author = try summaryInPlace(of: record.author) else {
            throw ProjectionError.inconsistent("no profile for the author of \(String(copying: id))")
        }
        guard try !privacyHides(author, from: viewer) else { return nil }
        if muting,
            try mutedWordsHide(
                [String(copying: record.caption), String(copying: record.text)],
                by: UserID(unchecked: String(copying: record.author)), from: viewer)
        {
            return nil
        }
        let counts = try postCountsInPlace(of: id)
        var (hasLiked, hasReposted) = (false, false)
        // Most posts have no likes or reposts, and then no one need be looked up.
        if let viewer, counts.likes > 0 {
            var like = ProjectionKey(bytes: id)
            like.append(viewer)
            hasLiked = try transaction.withValue(for: like.bytes, in: models.posts.likes) { $0 != nil }
        }
        if let viewer, counts.reposts > 0 {
            var repost = ProjectionKey(viewer)
            repost.append(bytes: id)
            hasReposted = try transaction.withValue(for: repost.bytes, in: models.posts.userReposts) { $0 != nil }
        }
        let fields = PostInPlace.Fields(
            id: id, author: author, caption: record.caption, text: record.text, media: record.media,
            createdAt: record.createdAt, editedAt: record.editedAt, likes: counts.likes, comments: counts.comments,
            hasLiked: hasLiked, reposts: counts.reposts, hasReposted: hasReposted,
            hasBookmarked: try viewer.map { try hasBookmarked(id, viewer: $0) } ?? false, replies: record.replies,
            mentions: try visibleSummaries(of: record.mentions.all, viewer: viewer))
        return (fields, record.repostOf)
    }
}

/// Whose plain reposts put posts into a list: everyone's (Home), the owner's and the users they follow (a Following
/// feed), or one user's (a posts tab).
enum FeedScope {
    case everyone
    case following(UserID)
    case user(UserID)

    /// Whether the list hides what muted users post and repost: feeds do; a user's own tab does not.
    var mutes: Bool {
        if case .user = self { false } else { true }
    }

    /// Whether `user`, an id read in place, reposts into the list.
    func includes(_ user: UnsafeRawBufferPointer, in view: borrowing ReadView) throws -> Bool {
        switch self {
        case .everyone:
            return true
        case .user(let owner):
            return owner.rawValue.utf8.elementsEqual(user)
        case .following(let owner):
            if owner.rawValue.utf8.elementsEqual(user) { return true }
            return try view.follows(owner, bytes: user)
        }
    }
}

/// Which posts of a list a screen asks for: the profile tabs (tweets, retweets, the media grid) and the feeds of
/// images only. A page of a kind reads past the posts of other kinds to fill itself.
public enum PostKind: String, Sendable, CaseIterable {
    case all
    /// Posts as posted that repost nothing.
    case original
    /// Plain reposts, and posts that quote another.
    case reposts
    /// Posts as posted with an image of their own (a plain repost of one is a repost).
    case media

    /// Whether the list holds plain reposts.
    var admitsReposts: Bool { self == .all || self == .reposts }

    func admits(_ post: PostInPlace) -> Bool {
        let reposted = post.repostedBy != nil
        return switch self {
        case .all: true
        case .original: !post.isRepost && !reposted
        case .reposts: post.isRepost || reposted
        case .media: !post.post.media.isEmpty && !reposted
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
