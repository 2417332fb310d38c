import ChorusDomain
import ChorusLog
import ChorusStorage

/// The posts each user saved for later, seen by that user alone.
struct Bookmarks: ReadModel {
    /// user, post → position of the bookmark (whether a viewer saved a post)
    static let bookmarks: StoreTableDefinition = "bookmarks"
    /// user, position of the bookmark → post (the saved list, newest bookmark first)
    static let userBookmarks: StoreTableDefinition = "user-bookmarks"

    static let tables = [bookmarks, userBookmarks]
    static let tablesLoadedInKeyOrder = [bookmarks, userBookmarks]

    let bookmarks: StoreTable
    let userBookmarks: StoreTable

    init(store: KeyValueStore) {
        bookmarks = store.table(Self.bookmarks)
        userBookmarks = store.table(Self.userBookmarks)
    }

    func apply(_ event: DomainEvent, at envelope: EventEnvelope, in transaction: StoreTransaction) throws {
        switch event {
        case .bookmarked(let event):
            try transaction.put(
                PositionValue.encode(envelope.position), for: saved(event.user, event.post), in: bookmarks)
            try transaction.put(
                Array(event.post.rawValue.utf8), for: listed(event.user, envelope.position), in: userBookmarks)
        case .unbookmarked(let event):
            try transaction.delete(saved(event.user, event.post), in: bookmarks)
            try transaction.delete(listed(event.user, event.bookmarkedAt), in: userBookmarks)
        default:
            // A deleted post, or one hidden from its saver since, stays listed and is left out as the list is read:
            // readable again (an unblock), it is back where it was.
            break
        }
    }

    private func saved(_ user: UserID, _ post: PostID) -> [UInt8] {
        var key = ProjectionKey(user)
        key.append(post)
        return key.bytes
    }

    private func listed(_ user: UserID, _ position: LogPosition) -> [UInt8] {
        var key = ProjectionKey(user)
        key.append(position)
        return key.bytes
    }
}

extension ReadView {
    /// The posts of `kind` that `user` saved, most recently saved first, with those they cannot read now (deleted, of
    /// someone blocked either way, or of a private account they do not follow) left out.
    public func bookmarkedPosts(of user: UserID, kind: PostKind = .all, page: PageRequest) throws -> Page<Post> {
        try Page(copying: { try bookmarkedPosts(of: user, kind: kind, page: page, $0) })
    }

    /// Lends `each` the posts of `kind` that `user` saved, read in place.
    public func bookmarkedPosts(
        of user: UserID, kind: PostKind = .all, page: PageRequest, _ each: (borrowing StoredPost) throws -> Void
    ) throws -> PageEnd {
        try transaction.forEachInPage(
            models.bookmarks.userBookmarks, prefix: ProjectionKey(user).prefix(), order: .newestFirst, request: page
        ) { _, value in
            guard let post = try postInPlace(at: value, viewer: user), kind.admits(post) else { return false }
            try each(post.lent())
            return true
        }
    }

    /// Whether `viewer` saved the post whose id is `id`, a buffer in the snapshot.
    func hasBookmarked(_ id: UnsafeRawBufferPointer, viewer: UserID) throws -> Bool {
        var key = ProjectionKey(viewer)
        key.append(bytes: id)
        return try transaction.withValue(for: key.bytes, in: models.bookmarks.bookmarks) { $0 != nil }
    }
}
