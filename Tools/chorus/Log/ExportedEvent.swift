import ChorusEventText
import ChorusLog
import Foundation

/// One event as `chorus log import` reads it, and `chorus log export` writes it (``appendLine(_:to:)``): a JSON object
/// on one line with every field of the stored record, the payload in base64. Lossless, and written with sorted keys,
/// so that export, import and export again give the same bytes.
struct ExportedEvent: Decodable {
    var position: UInt64
    var stream: String
    var streamVersion: UInt64
    var type: String
    var schemaVersion: UInt16
    var recordedAtMilliseconds: Int64
    var commandId: UUID
    var correlationId: UUID
    var actor: String
    /// In base64 in JSON (as `Data` is), held as the event's own bytes.
    var payload: [UInt8]

    init(
        position: UInt64, stream: String, streamVersion: UInt64, type: String, schemaVersion: UInt16,
        recordedAtMilliseconds: Int64, commandId: UUID, correlationId: UUID, actor: String, payload: [UInt8]
    ) {
        self.position = position
        self.stream = stream
        self.streamVersion = streamVersion
        self.type = type
        self.schemaVersion = schemaVersion
        self.recordedAtMilliseconds = recordedAtMilliseconds
        self.commandId = commandId
        self.correlationId = correlationId
        self.actor = actor
        self.payload = payload
    }

    private enum CodingKeys: String, CodingKey {
        case position, stream, streamVersion, type, schemaVersion, recordedAtMilliseconds, commandId, correlationId
        case actor, payload
    }

    init(from decoder: any Decoder) throws {
        let fields = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            position: try fields.decode(UInt64.self, forKey: .position),
            stream: try fields.decode(String.self, forKey: .stream),
            streamVersion: try fields.decode(UInt64.self, forKey: .streamVersion),
            type: try fields.decode(String.self, forKey: .type),
            schemaVersion: try fields.decode(UInt16.self, forKey: .schemaVersion),
            recordedAtMilliseconds: try fields.decode(Int64.self, forKey: .recordedAtMilliseconds),
            commandId: try fields.decode(UUID.self, forKey: .commandId),
            correlationId: try fields.decode(UUID.self, forKey: .correlationId),
            actor: try fields.decode(String.self, forKey: .actor),
            payload: Array(try fields.decode(Data.self, forKey: .payload)))
    }

    /// Appends the event's line, without its newline, to `json`: the keys sorted, the ids in uppercase, the payload in
    /// padded base64, as JSONEncoder wrote it with `.sortedKeys` and `.withoutEscapingSlashes` (exports made by an
    /// older Chorus are the same bytes), but straight into bytes: JSONEncoder took three quarters of an export.
    static func appendLine(_ event: RecordedEvent, to json: inout JSONBytes) {
        json.open()
        json.key("actor")
        json.string(event.actor)
        json.key("commandId")
        json.uuid(event.commandID.uuid.uuid, uppercase: true)
        json.key("correlationId")
        json.uuid(event.correlationID.uuid.uuid, uppercase: true)
        json.key("payload")
        json.base64(event.payload)
        json.key("position")
        json.unsigned(event.position.rawValue)
        json.key("recordedAtMilliseconds")
        json.integer(event.recordedAt.millisecondsSince1970)
        json.key("schemaVersion")
        json.unsigned(UInt64(event.schemaVersion))
        json.key("stream")
        json.string(event.stream.rawValue)
        json.key("streamVersion")
        json.unsigned(event.streamVersion)
        json.key("type")
        json.string(event.type)
        json.close()
    }

    /// The event on line `number` of an export; throws a message naming the line and what is wrong.
    static func parse(_ line: UnsafeRawBufferPointer, number: Int) throws -> RecordedEvent {
        // Lines as ``appendLine(_:to:)`` writes them are read by hand, several times faster; JSONDecoder reads the rest
        // (other spacing or order, escapes) and says what is wrong.
        var scanner = ExportLineScanner(line)
        if let event = scanner.event() { return event }
        let exported: ExportedEvent
        do {
            exported = try JSONDecoder().decode(ExportedEvent.self, from: Data(line))
        } catch DecodingError.keyNotFound(let key, _) {
            throw OperatorError("line \(number): \"\(key.stringValue)\" is missing")
        } catch DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context),
            DecodingError.dataCorrupted(let context)
        {
            let field = context.codingPath.map(\.stringValue).joined(separator: ".")
            throw OperatorError(
                "line \(number): " + (field.isEmpty ? "not a JSON object" : "\"\(field)\" is not valid"))
        }
        guard exported.position > 0, exported.streamVersion > 0, exported.schemaVersion > 0 else {
            throw OperatorError("line \(number): position, streamVersion and schemaVersion must be positive")
        }
        guard let stream = try? StreamID(exported.stream) else {
            throw OperatorError(
                "line \(number): \"stream\" must be 1 to \(StreamID.maximumUTF8Length) UTF-8 bytes without NUL")
        }
        return RecordedEvent(
            position: LogPosition(exported.position), stream: stream, streamVersion: exported.streamVersion,
            type: exported.type, schemaVersion: exported.schemaVersion,
            recordedAt: EventTime(millisecondsSince1970: exported.recordedAtMilliseconds),
            commandID: CommandID(exported.commandId), correlationID: CorrelationID(exported.correlationId),
            actor: exported.actor, payload: exported.payload)
    }
}
