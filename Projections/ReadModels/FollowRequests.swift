import ChorusDomain
import ChorusLog
import ChorusStorage

/// The pending requests to follow private accounts: each account's list of them, and whether a viewer awaits an
/// answer (``Profile/followRequested``). A request leaves when it is accepted, declined or withdrawn.
struct FollowRequests: ReadModel {
    /// followee, position of the request → follower (the requests list, newest first)
    static let requests: StoreTableDefinition = "follow-requests"
    /// follower, followee → position of the request
    static let requested: StoreTableDefinition = "requested-follows"

    static let tables = [requests, requested]

    let requests: StoreTable
    let requested: StoreTable

    init(store: KeyValueStore) {
        requests = store.table(Self.requests)
        requested = store.table(Self.requested)
    }

    func apply(_ event: DomainEvent, at envelope: EventEnvelope, in transaction: StoreTransaction) throws {
        switch event {
        case .followRequested(let event):
            try transaction.put(
                PositionValue.encode(envelope.position), for: Self.asked(event.follower, event.followee),
                in: requested)
            try transaction.put(
                Array(event.follower.rawValue.utf8), for: Self.listed(event.followee, envelope.position), in: requests)
        case .followRequestEnded(let event):
            try end(event.follower, event.followee, requestedAt: event.requestedAt, in: transaction)
        case .followed(let event):
            guard let requestedAt = event.requestedAt else { return }
            try end(event.follower, event.followee, requestedAt: requestedAt, in: transaction)
        default:
            break
        }
    }

    private func end(_ follower: UserID, _ followee: UserID, requestedAt: LogPosition, in transaction: StoreTransaction)
        throws
    {
        try transaction.delete(Self.asked(follower, followee), in: requested)
        try transaction.delete(Self.listed(followee, requestedAt), in: requests)
    }

    private static func asked(_ follower: UserID, _ followee: UserID) -> [UInt8] {
        var key = ProjectionKey(follower)
        key.append(followee)
        return key.bytes
    }

    private static func listed(_ followee: UserID, _ position: LogPosition) -> [UInt8] {
        var key = ProjectionKey(followee)
        key.append(position)
        return key.bytes
    }
}

extension ReadView {
    /// Who asked to follow `user` and awaits the answer, most recent first, without those hidden from them (a block
    /// either way ended the request already; a suspension hides the asker).
    public func followRequests(of user: UserID, page: PageRequest) throws -> Page<UserSummary> {
        try transaction.page(
            models.followRequests.requests, prefix: ProjectionKey(user).prefix(), order: .newestFirst, request: page
        ) { _, value in
            let follower = UserID(unchecked: String(decoding: value, as: UTF8.self))
            return try hides(follower, from: user) ? nil : try requireSummary(follower)
        }
    }

    /// Whether `follower` asked to follow `followee` and awaits the answer.
    public func hasRequestedToFollow(_ follower: UserID, _ followee: UserID) throws -> Bool {
        var key = ProjectionKey(follower)
        key.append(followee)
        return try transaction.withValue(for: key.bytes, in: models.followRequests.requested) { $0 != nil }
    }
}
