import ChorusDomain
import ChorusLog
import ChorusStorage

/// Every post and every plain repost, in log order: the Home feed. A position maps to the post shown there.
struct HomeTimeline: ReadModel {
    /// position → post
    static let home: StoreTableDefinition = "home"
    static let tables = [home]

    let home: StoreTable

    init(store: KeyValueStore) {
        home = store.table(Self.home)
    }

    func apply(_ event: DomainEvent, at envelope: EventEnvelope, in transaction: StoreTransaction) throws {
        switch event {
        case .postCreated(let event):
            // Events come in log order, so each position is the table's newest key: an append, without a search.
            try transaction.put(
                Array(event.post.rawValue.utf8), for: ProjectionKey.position(envelope.position), in: home, append: true)
        case .reposted(let event):
            // A plain repost shows its post again, at the repost's position (a feed shows each post once: see
            // ``ReadView/feedEntry(at:post:viewer:scope:)``).
            try transaction.put(
                Array(event.post.rawValue.utf8), for: ProjectionKey.position(envelope.position), in: home, append: true)
        case .unreposted(let event):
            try transaction.delete(ProjectionKey.position(event.repostedAt), in: home)
        case .postDeleted(let event):
            try transaction.delete(ProjectionKey.position(event.postedAt), in: home)
        default:
            break
        }
    }
}

extension ReadView {
    /// Every post, newest first; a reposted one once, at its newest repost.
    public func homeFeed(viewer: UserID?, kind: PostKind = .all, page: PageRequest) throws -> Page<Post> {
        try Page(copying: { try homeFeed(viewer: viewer, kind: kind, page: page, $0) })
    }

    /// Lends `each` every post of `kind`, newest first, read in place.
    public func homeFeed(
        viewer: UserID?, kind: PostKind = .all, page: PageRequest, _ each: (borrowing StoredPost) throws -> Void
    ) throws -> PageEnd {
        try transaction.forEachInPage(models.homeTimeline.home, prefix: [], order: .newestFirst, request: page) {
            key, value in
            let position = ProjectionKey.position(in: key, at: 0)
            guard let post = try feedEntry(at: position, post: value, viewer: viewer, scope: .everyone, kind: kind)
            else { return false }
            try each(post.lent())
            return true
        }
    }

    /// The id of the post at `position` (posted or plainly reposted there), a buffer in the snapshot; nil if no post is
    /// there.
    func postID(at position: LogPosition) throws -> UnsafeRawBufferPointer? {
        try ProjectionKey.withPositionKey(position) {
            try transaction.valueInPlace(for: $0, in: models.homeTimeline.home)
        }
    }
}
