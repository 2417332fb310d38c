import ChorusLog

/// How domain events are stored in the log: a type name, the schema version of that type's payload, and the payload
/// in ``PayloadWriter``'s binary form. Decoding takes every schema version ever written to the current shape
/// (upcasting), so a log written by an older Chorus replays and projects unchanged. Each type's versions are listed
/// beside its codec, in its feature's folder.
extension DomainEvent {
    /// The log's type name of the event.
    public var typeName: String { type(of: stored).typeName }

    /// The schema version each type is written with now; 1 for a name no Chorus wrote.
    public static func currentSchemaVersion(ofType type: String) -> UInt16 {
        StoredEventNames.type(named: type)?.schemaVersion ?? 1
    }

    /// The event as the log stores it, its personal fields sealed under their owner's key in `keys`.
    public func encoded(keys: any PersonalDataKeys) throws -> NewEvent {
        let event = stored
        let type = Swift.type(of: event)
        var payload = PayloadWriter()
        try event.encode(to: &payload, keys: keys)
        return NewEvent(type: type.typeName, schemaVersion: type.schemaVersion, payload: payload.bytes)
    }

    /// Decodes a stored event, opening its personal fields with their owner's key in `keys`; an erased user's read as
    /// empty. Throws ``DomainEventDecodingError`` for an unknown type or version, a bad payload, or a missing key.
    public init(decoding event: borrowing RecordedEvent, keys: borrowing any PersonalDataKeys) throws {
        // Both borrowed, here and in `decode`: `keys` is one object that every thread decoding events shares, and a
        // copy for each event retained it, two cores taking turns with its reference count.
        self = try Self.decode(
            typeName: event.type, version: event.schemaVersion, payload: event.payload, at: event.position, keys: keys)
    }

    /// Decodes an event from the fields that decoding reads: for a caller whose events lie in memory the call could
    /// change (an array's elements), which would otherwise copy the whole event to hand it on.
    static func decode(
        typeName: String, version: UInt16, payload: [UInt8], at stored: LogPosition, keys: any PersonalDataKeys
    ) throws -> DomainEvent {
        func failure(_ reason: String) -> DomainEventDecodingError {
            DomainEventDecodingError(position: stored, type: typeName, reason: reason)
        }
        guard let type = StoredEventNames.type(named: typeName) else {
            throw failure("unknown event type \(typeName)")
        }
        guard (1...type.schemaVersion).contains(version) else { throw failure("unknown schema version \(version)") }
        var reader = PayloadReader(payload)
        do {
            let decoded = try type.decodeEvent(from: &reader, version: version, keys: keys)
            try reader.finish()
            return decoded
        } catch let error as PayloadError {
            throw failure(error.description)
        } catch let error as DataKeyError {
            throw failure(error.description)
        }
    }
}

/// A stored event this build cannot read.
public struct DomainEventDecodingError: Error, CustomStringConvertible {
    public let position: LogPosition
    public let type: String
    public let reason: String

    init(position: LogPosition, type: String, reason: String) {
        (self.position, self.type, self.reason) = (position, type, reason)
    }

    public var description: String { "event \(type) at position \(position): \(reason)" }
}
