import ChorusDomain
import ChorusLog

/// One read model: the tables it owns and how each event changes them.
///
/// `apply` must depend only on the event, its position and time, and the store's contents, never on the clock or
/// on how events are batched, so that a rebuild equals the live-built store byte for byte. A model may read other
/// models' tables; the engine applies the models to each event in a fixed order (``ProjectionEngine/modelTypes``).
public protocol ReadModel: Sendable {
    /// The tables this model owns.
    static var tables: [StoreTableDefinition] { get }

    init(store: KeyValueStore)

    func apply(_ event: DomainEvent, at envelope: EventEnvelope, in transaction: StoreTransaction) throws
}

/// What a read model may use of an event's envelope.
public struct EventEnvelope: Sendable {
    public let position: LogPosition
    public let recordedAt: EventTime

    public init(position: LogPosition, recordedAt: EventTime) {
        self.position = position
        self.recordedAt = recordedAt
    }
}
