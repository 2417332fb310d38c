import ChorusDomain
import ChorusLog

/// Every post, in log order.
///
/// - `home`: position → post
struct HomeTimeline: ReadModel {
    static let tables = [Tables.home]

    let home: StoreTable

    init(store: KeyValueStore) {
        home = store.table(Tables.home)
    }

    func apply(_ event: DomainEvent, at envelope: EventEnvelope, in transaction: StoreTransaction) throws {
        guard case .postCreated(let event) = event else { return }
        // Events come in log order, so each position is the table's newest key: an append, without a search.
        try transaction.put(
            Array(event.post.rawValue.utf8), for: ProjectionKey.position(envelope.position), in: home, append: true)
    }
}
