import ChorusDomain
import ChorusLog
import ChorusStorage

/// The posts of each hashtag, newest first, and how many posts stand with each tag. A post is listed at the position
/// it was posted at under each tag its caption and text hold (``Hashtags``); an edit moves it in and out of tags, a
/// deletion out of all. Applied before ``Posts``, whose record of a post still holds what it said before the event.
struct HashtagPages: ReadModel {
    /// tag, NUL, position of the post → post
    static let posts: StoreTableDefinition = "hashtag-posts"
    /// tag → how many standing posts hold it (u64 big-endian)
    static let counts: StoreTableDefinition = "hashtag-counts"
    static let tables = [posts, counts]

    let posts: StoreTable
    let counts: StoreTable
    let records: StoreTable

    init(store: KeyValueStore) {
        posts = store.table(Self.posts)
        counts = store.table(Self.counts)
        records = store.table(Posts.posts)
    }

    func apply(_ event: DomainEvent, at envelope: EventEnvelope, in transaction: StoreTransaction) throws {
        switch event {
        case .postCreated(let event):
            for tag in Hashtags.tags(in: event.caption, event.text) {
                try list(event.post, at: envelope.position, under: tag, in: transaction)
            }
        case .postEdited(let event) where event.caption != nil || event.text != nil:
            guard let record = try record(of: event.post, in: transaction) else { return }
            let before = Hashtags.tags(in: record.caption, record.text)
            let after = Hashtags.tags(in: event.caption ?? record.caption, event.text ?? record.text)
            for tag in before where !after.contains(tag) {
                try unlist(at: record.position, under: tag, in: transaction)
            }
            for tag in after where !before.contains(tag) {
                try list(event.post, at: record.position, under: tag, in: transaction)
            }
        case .postDeleted(let event):
            guard let record = try record(of: event.post, in: transaction) else { return }
            for tag in Hashtags.tags(in: record.caption, record.text) {
                try unlist(at: event.postedAt, under: tag, in: transaction)
            }
        default:
            break
        }
    }

    private func record(of post: PostID, in transaction: StoreTransaction) throws -> PostRecord? {
        try transaction.value(for: ProjectionKey(post).bytes, in: records).map(PostRecord.init(decoding:))
    }

    private func list(_ post: PostID, at position: LogPosition, under tag: String, in transaction: StoreTransaction)
        throws
    {
        try transaction.put(Array(post.rawValue.utf8), for: Self.key(tag, position), in: posts)
        try count(tag, by: 1, in: transaction)
    }

    private func unlist(at position: LogPosition, under tag: String, in transaction: StoreTransaction) throws {
        guard try transaction.delete(Self.key(tag, position), in: posts) else { return }
        try count(tag, by: -1, in: transaction)
    }

    private func count(_ tag: String, by change: Int64, in transaction: StoreTransaction) throws {
        let key = Array(tag.utf8)
        let now = UInt64(Int64(try transaction.withValue(for: key, in: counts) { Self.count($0) }) + change)
        if now == 0 {
            _ = try transaction.delete(key, in: counts)
        } else {
            try transaction.put(withUnsafeBytes(of: now.bigEndian, Array.init), for: key, in: counts)
        }
    }

    static func count(_ value: UnsafeRawBufferPointer?) -> UInt64 {
        guard let value, value.count == 8 else { return 0 }
        return UInt64(bigEndian: value.loadUnaligned(as: UInt64.self))
    }

    /// A tag's entries start with its bytes and a NUL, which no tag holds.
    static func prefix(_ tag: String) -> [UInt8] { Array(tag.utf8) + [0] }

    static func key(_ tag: String, _ position: LogPosition) -> [UInt8] {
        prefix(tag) + ProjectionKey.position(position)
    }
}

/// A hashtag and how many posts hold it.
public struct HashtagCount: Sendable, Hashable {
    public let tag: String
    public let posts: UInt64
}

extension ReadView {
    /// The posts holding `tag` (folded, ``Hashtags/folded(_:)``), newest first, without those hidden from `viewer`
    /// (authors blocked either way, or muted).
    public func hashtagPosts(
        _ tag: String, viewer: UserID?, kind: PostKind = .all, page: PageRequest,
        _ each: (borrowing StoredPost) throws -> Void
    ) throws -> PageEnd {
        try transaction.forEachInPage(
            models.hashtagPages.posts, prefix: HashtagPages.prefix(tag), order: .newestFirst, request: page
        ) { _, value in
            guard let post = try postInPlace(at: value, viewer: viewer, muting: true), kind.admits(post) else {
                return false
            }
            try each(post.lent())
            return true
        }
    }

    /// `post` as a tag's page shows it to `viewer`, read in place; nil when it is gone or hidden from them (its author
    /// blocked either way, or muted): what the `hashtag:{tag}` live topic sends.
    public func withTaggedPost<R>(_ post: PostID, viewer: UserID, _ body: (borrowing StoredPost) throws -> R) throws
        -> R?
    {
        guard let found = try storedID(of: post), let shown = try postInPlace(at: found, viewer: viewer, muting: true)
        else { return nil }
        return try body(shown.lent())
    }

    /// The tags starting with `prefix` (folded), most used first, then in order; every tag when it is empty. A cursor
    /// is the last tag of the page before.
    public func searchHashtags(_ prefix: String, page: PageRequest) throws -> Page<HashtagCount> {
        var found: [HashtagCount] = []
        try transaction.scan(models.hashtagPages.counts, prefix: Array(prefix.utf8)) { key, value in
            found.append(
                HashtagCount(tag: String(decoding: key, as: UTF8.self), posts: HashtagPages.count(value)))
            return true
        }
        found.sort { ($0.posts, $1.tag) > ($1.posts, $0.tag) }
        var start = found.startIndex
        if let cursor = page.cursor {
            let after = String(decoding: cursor.bytes, as: UTF8.self)
            guard let index = found.firstIndex(where: { $0.tag == after }) else { throw ProjectionError.badCursor }
            start = index + 1
        }
        let slice = found[start...].prefix(page.limit)
        let hasMore = slice.endIndex < found.endIndex
        return Page(
            items: Array(slice), nextCursor: hasMore ? slice.last.map { PageCursor(bytes: Array($0.tag.utf8)) } : nil)
    }
}
