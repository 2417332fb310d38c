import ChorusDomain
import ChorusLog
import Foundation

/// A recorded event for people and for tools such as `jq`: its envelope and its decoded fields, read off the event's
/// own types, so that a new event type shows without code here. Password hashes are left out.
struct ReplayedEvent {
    let event: RecordedEvent
    /// The decoded fields; nil when the event does not decode (`problem` says why).
    let data: [String: Any]?
    let problem: String?
    /// Every user the event names, for `--user`.
    let users: Set<String>

    private static let redacted: Set<String> = ["passwordHash"]

    init(_ event: RecordedEvent, keys: any PersonalDataKeys) {
        self.event = event
        do {
            let decoded = try DomainEvent(decoding: event, keys: keys)
            var users: Set<String> = []
            // A DomainEvent is a case whose one value is the event's struct.
            let payload = Mirror(reflecting: decoded).children.first?.value ?? decoded
            var fields: [String: Any] = [:]
            for child in Mirror(reflecting: payload).children {
                guard let label = child.label else { continue }
                fields[label] = Self.redacted.contains(label) ? "(not shown)" : Self.json(child.value, users: &users)
            }
            data = fields
            problem = nil
            self.users = users
        } catch {
            data = nil
            problem = "\(error)"
            users = []
        }
    }

    /// Plain values for JSON: ids and times as their text, optionals as null, cases as their name or `{name: value}`.
    private static func json(_ value: Any, users: inout Set<String>) -> Any {
        switch value {
        case let user as UserID:
            users.insert(user.rawValue)
            return user.rawValue
        case let text as String: return text
        case let flag as Bool: return flag
        case let number as any BinaryInteger: return Int64(number)
        case let position as LogPosition: return position.rawValue
        case let time as EventTime: return Timestamps.iso8601(time)
        case let id as any ChorusIdentifier: return id.rawValue
        default: break
        }
        let mirror = Mirror(reflecting: value)
        switch mirror.displayStyle {
        case .optional:
            guard let wrapped = mirror.children.first?.value else { return NSNull() }
            return json(wrapped, users: &users)
        case .enum:
            guard let associated = mirror.children.first, let label = associated.label else { return "\(value)" }
            return [label: json(associated.value, users: &users)]
        default:
            return "\(value)"
        }
    }

    var jsonObject: [String: Any] {
        var object: [String: Any] = [
            "position": event.position.rawValue, "stream": event.stream.rawValue, "streamVersion": event.streamVersion,
            "type": event.type, "schemaVersion": Int(event.schemaVersion),
            "recordedAt": Timestamps.iso8601(event.recordedAt),
            "actor": event.actor, "commandId": event.commandID.description,
            "correlationId": event.correlationID.description,
        ]
        if let data { object["data"] = data }
        if let problem { object["problem"] = problem }
        return object
    }

    /// One line: position, time, type, stream and version, actor, then the fields.
    var text: String {
        let fields =
            data.map { data in
                data.keys.sorted().map { key in "\(key)=\(Self.plain(data[key] ?? NSNull()))" }.joined(separator: " ")
            } ?? "(does not decode: \(problem ?? "?"))"
        return "\(event.position)  \(Timestamps.iso8601(event.recordedAt))  \(event.type)  "
            + "\(event.stream)#\(event.streamVersion)  by \(event.actor.isEmpty ? "-" : event.actor)  \(fields)"
    }

    private static func plain(_ value: Any) -> String {
        switch value {
        case is NSNull: "null"
        case let text as String: text.contains(" ") || text.isEmpty ? "\"\(text)\"" : text
        case let object as [String: Any]: object.map { "\($0.key):\(plain($0.value))" }.joined(separator: ",")
        default: "\(value)"
        }
    }
}

/// Times as the HTTP API writes them: UTC with milliseconds.
enum Timestamps {
    private static let format = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    /// Exact: whole seconds through Foundation, the milliseconds by hand (a `Date` of .758 s formats as .757).
    static func iso8601(_ time: EventTime) -> String {
        let (seconds, milliseconds) = time.millisecondsSince1970.quotientAndRemainder(dividingBy: 1000)
        let (whole, fraction) = milliseconds < 0 ? (seconds - 1, milliseconds + 1000) : (seconds, milliseconds)
        let text = Date(timeIntervalSince1970: Double(whole)).formatted(.iso8601)  // …T13:56:25Z
        return text.dropLast() + "." + String(String(fraction + 1000).dropFirst()) + "Z"
    }

    /// `2026-11-22T12:00:00Z` or with milliseconds; nil when neither.
    static func parse(_ text: String) -> EventTime? {
        guard let date = (try? Date(text, strategy: format)) ?? (try? Date(text, strategy: .iso8601)) else {
            return nil
        }
        // To the nearest millisecond: .757 parses as .75699…
        return EventTime(millisecondsSince1970: Int64((date.timeIntervalSince1970 * 1000).rounded()))
    }
}
