import ChorusDomain
import ChorusLog
import ChorusStorage

/// One read model: the tables it owns, how each event changes them, and (in an extension of ``ReadView`` in its file)
/// how the screens read them.
///
/// `apply` must depend only on the event, its position and time, and the store's contents, never on the clock or
/// on how events are batched, so that a rebuild equals the live-built store byte for byte. A model may read other
/// models' tables; the engine applies the models to each event in a fixed order (``ReadModels``).
protocol ReadModel: Sendable {
    /// The tables this model owns.
    static var tables: [StoreTableDefinition] { get }

    /// The tables a build loads in key order (``ChorusStorage/StoreTransaction/loadingInKeyOrder(_:spillingInto:_:)``):
    /// for a model that follows events, tables no model that follows events reads while a build replays the log; for
    /// a ``DerivedReadModel``, tables it writes out of key order when it derives them.
    static var tablesLoadedInKeyOrder: [StoreTableDefinition] { get }

    init(store: KeyValueStore)

    func apply(_ event: DomainEvent, at envelope: EventEnvelope, in transaction: StoreTransaction) throws
}

extension ReadModel {
    static var tablesLoadedInKeyOrder: [StoreTableDefinition] { [] }
}

/// A read model that is a function of other models' tables at the same position, such as a count of entries or a
/// join. Following the live log, the engine applies it event by event like any other. Building read models from an
/// empty store, it skips it while replaying the log and fills its tables once at the end from the others, in the same
/// transaction: the same contents (a test compares them key by key), for a fraction of the work. A Following feed
/// fan-out is most of a replay, and counters are a read and a write per like or follow.
protocol DerivedReadModel: ReadModel {
    /// Fills this model's empty tables from the other models' tables.
    func derive(in transaction: StoreTransaction) throws
}

/// What a read model may use of an event's envelope.
struct EventEnvelope: Sendable {
    let position: LogPosition
    let recordedAt: EventTime
}
