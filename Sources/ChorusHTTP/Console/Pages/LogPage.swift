import ChorusBackend
import ChorusDomain
import ChorusEventText
import ChorusLog
import Foundation
import Hummingbird

/// The Log: the events, newest first, decoded as `chorus replay` shows them, filtered by type, user, stream, position
/// range and time. A page looks through at most ``scanLimit`` events, so that a rare filter costs no more than a common
/// one: when it has looked that far, it says where it stopped and links on from there.
struct LogPage {
    struct Row {
        let position: UInt64
        let recordedAt: String
        let type: String
        let stream: String
        let actor: String
        let fields: String
    }

    struct TypeOption {
        let name: String
        let selected: Bool
    }

    /// Events a page shows at most.
    static let pageSize = 50
    /// Events a page looks through at most.
    static let scanLimit = 10_000

    let filter: LogFilter
    let types: [TypeOption]
    let rows: [Row]
    /// Where to go on looking, older than what the page looked through; nil at the log's first event.
    let olderLink: String?
    /// What the page looked through, when it stopped at ``scanLimit`` before filling up.
    let lookedThrough: String?
    let head: UInt64

    static let template = """
        {{<layout}}
        {{$content}}
        {{#page}}
        <form method="get" action="/admin/log" class="filters" aria-label="Filters">
        <label>Type<select name="type"><option value="">Any</option>\
        {{#types}}<option{{#selected}} selected{{/selected}}>{{name}}</option>{{/types}}</select></label>
        {{#filter}}
        <label>User<input name="user" value="{{user}}" size="28"></label>
        <label>Stream<input name="stream" value="{{stream}}" size="28"></label>
        <label>From position<input name="from" value="{{from}}" inputmode="numeric" size="9"></label>
        <label>To position<input name="to" value="{{to}}" inputmode="numeric" size="9"></label>
        <label>Since<input name="since" value="{{since}}" placeholder="2026-12-01T09:00:00Z" size="22"></label>
        <label>Until<input name="until" value="{{until}}" placeholder="2026-12-01T10:00:00Z" size="22"></label>
        {{/filter}}
        <button type="submit">Filter</button>
        </form>
        <p class="notice">The log's head is at {{head}}.{{#lookedThrough}} {{.}}{{/lookedThrough}}</p>
        <table>
        <thead><tr><th scope="col">Position</th><th scope="col">Recorded</th><th scope="col">Type</th>\
        <th scope="col">Stream</th><th scope="col">Actor</th><th scope="col">Fields</th></tr></thead>
        <tbody>
        {{#rows}}<tr><td><a href="/admin/log/{{position}}">{{position}}</a></td><td class="time">{{recordedAt}}</td>\
        <td>{{type}}</td><td>{{stream}}</td><td>{{actor}}</td><td class="fields">{{fields}}</td></tr>{{/rows}}
        {{^rows}}<tr><td colspan="6">No events here match.</td></tr>{{/rows}}
        </tbody>
        </table>
        {{#olderLink}}<p><a href="{{.}}">Older events</a></p>{{/olderLink}}
        {{/page}}
        {{/content}}
        {{/layout}}
        """
}

/// One event, whole: its envelope, its decoded fields, and the JSON line `chorus replay --json` prints for it.
struct EventPage {
    struct Field {
        let name: String
        let value: String
    }

    let envelope: [Field]
    let fields: [Field]
    let problem: String?
    let json: String
    let previous: UInt64?
    let next: UInt64?

    static let template = """
        {{<layout}}
        {{$content}}
        {{#page}}
        <p>{{#previous}}<a href="/admin/log/{{.}}">Previous event</a> {{/previous}}\
        {{#next}}<a href="/admin/log/{{.}}">Next event</a>{{/next}}</p>
        <h2>Envelope</h2>
        <dl>{{#envelope}}<dt>{{name}}</dt><dd>{{value}}</dd>{{/envelope}}</dl>
        <h2>Fields</h2>
        {{#problem}}<p class="error">Does not decode: {{.}}</p>{{/problem}}
        <dl>{{#fields}}<dt>{{name}}</dt><dd>{{value}}</dd>{{/fields}}</dl>
        <h2>As <code>chorus replay --json</code> prints it</h2>
        <pre>{{json}}</pre>
        {{/page}}
        {{/content}}
        {{/layout}}
        """
}

/// The Log page's filter, as its query gives it: each field as typed (for the form), and the ``ReplayFilter`` with
/// the position range it makes.
struct LogFilter {
    let type: String
    let user: String
    let stream: String
    let from: String
    let to: String
    let since: String
    let until: String

    init(_ query: (String) -> String?) {
        func field(_ name: String) -> String { (query(name) ?? "").trimmingCharacters(in: .whitespaces) }
        (type, user, stream) = (field("type"), field("user"), field("stream"))
        (from, to, since, until) = (field("from"), field("to"), field("since"), field("until"))
    }

    /// The filter for `chorus replay`'s rules, with the first and last positions to look through.
    func replayFilter(head: LogPosition) throws -> (filter: ReplayFilter, first: UInt64, last: UInt64) {
        func position(_ text: String, _ label: String) throws -> UInt64? {
            guard !text.isEmpty else { return nil }
            guard let value = UInt64(text), value > 0 else {
                throw ConsoleRefusal(.badRequest, "\(label) must be a log position, a whole number from 1, not \(text)")
            }
            return value
        }
        func time(_ text: String, _ label: String) throws -> EventTime? {
            guard !text.isEmpty else { return nil }
            guard let value = Timestamps.parse(text) else {
                throw ConsoleRefusal(.badRequest, "\(label) must be an ISO 8601 time such as 2026-12-01T09:00:00Z")
            }
            return value
        }
        if !type.isEmpty, !DomainEvent.typeNames.contains(type) {
            throw ConsoleRefusal(.badRequest, "There is no event type \(type).")
        }
        if !stream.isEmpty, (try? StreamID(stream)) == nil {
            throw ConsoleRefusal(
                .badRequest, "A stream is 1 to \(StreamID.maximumUTF8Length) bytes, such as post-01m8….")
        }
        let filter = ReplayFilter(
            types: type.isEmpty ? [] : [type], streams: stream.isEmpty ? [] : [stream], user: user.isEmpty ? nil : user,
            since: try time(since, "Since"), until: try time(until, "Until"))
        return (
            filter, try position(from, "From position") ?? 1,
            min(try position(to, "To position") ?? .max, head.rawValue)
        )
    }

    /// This filter's query, looking through `last` and before.
    func query(last: UInt64) -> String {
        let fields = [
            ("type", type), ("user", user), ("stream", stream), ("from", from), ("to", String(last)), ("since", since),
            ("until", until),
        ]
        return fields.filter { !$0.1.isEmpty }.map { "\($0.0)=\(ConsoleRoutes.queryEscaped($0.1))" }.joined(
            separator: "&")
    }
}

extension ConsoleRoutes {
    func addLog(to console: RouterGroup<Context>) {
        page(console, "log") { request, _ in
            let filter = LogFilter { request.uri.queryParameters[Substring($0)].map(String.init) }
            return ConsoleView(title: "Log", template: "log", page: try logPage(filter))
        }
        page(console, "log/:position") { _, context in
            guard let text = context.parameters.get("position"), let position = UInt64(text), position > 0,
                let event = try backend.log.event(at: LogPosition(position))
            else {
                throw ConsoleRefusal(.notFound, "The log has no event at that position.")
            }
            return ConsoleView(
                title: "Event \(position)", template: "event", page: eventPage(event), section: "Log")
        }
    }

    /// The newest events through the filter's last position that it admits, looking through at most
    /// ``LogPage/scanLimit`` of them, a chunk at a time from the newest.
    private func logPage(_ typed: LogFilter) throws -> LogPage {
        let log = backend.log
        let head = log.head
        var (filter, first, last) = try typed.replayFilter(head: head)
        // Recorded times rise with positions (the log stamps each commit no earlier than the one before).
        if let since = filter.since { first = max(first, try firstPosition(recordedAtOrAfter: since)) }
        if let until = filter.until { last = min(last, try firstPosition(recordedAtOrAfter: until) - 1) }
        var rows: [LogPage.Row] = []
        var next = last
        var looked = 0
        var events = try NewestFirst(log: log, positions: first...max(first, last), stream: filter.streams.first)
        var exhausted = last < first
        scanning: while !exhausted, looked < LogPage.scanLimit, rows.count < LogPage.pageSize {
            guard let chunk = try events.next() else {
                exhausted = true
                break
            }
            for event in chunk {
                looked += 1
                next = event.position.rawValue - 1
                if filter.admitsEnvelope(of: event) {
                    let replayed = ReplayedEvent(decoding: event, keys: backend.keys, namingUsers: filter.user != nil)
                    if filter.admits(event, replayed) { rows.append(Self.row(event, replayed)) }
                }
                if rows.count == LogPage.pageSize || looked == LogPage.scanLimit { break scanning }
            }
        }
        let more = !exhausted && next >= first && next > 0
        return LogPage(
            filter: typed,
            types: DomainEvent.typeNames.map { LogPage.TypeOption(name: $0, selected: $0 == typed.type) },
            rows: rows, olderLink: more ? "/admin/log?" + typed.query(last: next) : nil,
            lookedThrough: more && rows.count < LogPage.pageSize
                ? "This page looked through positions \(next + 1) to \(last) and stopped there." : nil,
            head: head.rawValue)
    }

    /// The first position recorded at or after `time`; one past the head when there is none.
    private func firstPosition(recordedAtOrAfter time: EventTime) throws -> UInt64 {
        var (low, high) = (UInt64(1), backend.log.head.rawValue + 1)
        while low < high {
            let middle = low + (high - low) / 2
            let recorded = try backend.log.event(at: LogPosition(middle))?.recordedAt
            if let recorded, recorded < time { low = middle + 1 } else { high = middle }
        }
        return low
    }

    private static func row(_ event: RecordedEvent, _ replayed: ReplayedEvent) -> LogPage.Row {
        LogPage.Row(
            position: event.position.rawValue, recordedAt: event.recordedAt.rfc3339,
            type: TerminalText.escaped(event.type),
            stream: "\(TerminalText.escaped(event.stream.rawValue))#\(event.streamVersion)",
            actor: ReplayedEvent.actor(of: event), fields: replayed.fieldsText)
    }

    private func eventPage(_ event: RecordedEvent) -> EventPage {
        let replayed = ReplayedEvent(decoding: event, keys: backend.keys)
        var json: [UInt8] = []
        replayed.appendJSON(of: event, to: &json)
        let envelope = [
            ("position", "\(event.position)"), ("recordedAt", event.recordedAt.rfc3339),
            ("type", TerminalText.escaped(event.type)), ("schemaVersion", "\(event.schemaVersion)"),
            ("stream", TerminalText.escaped(event.stream.rawValue)), ("streamVersion", "\(event.streamVersion)"),
            ("actor", ReplayedEvent.actor(of: event)),
            ("commandId", "\(event.commandID)"), ("correlationId", "\(event.correlationID)"),
        ]
        let position = event.position.rawValue
        return EventPage(
            envelope: envelope.map { EventPage.Field(name: $0.0, value: $0.1) },
            fields: (replayed.fields ?? []).map { EventPage.Field(name: $0.name, value: $0.value) },
            problem: replayed.problem, json: String(decoding: json, as: UTF8.self),
            previous: position > 1 ? position - 1 : nil,
            next: position < backend.log.head.rawValue ? position + 1 : nil)
    }
}

/// The events a Log page looks through, newest first, a chunk at a time: the positions of a range, or, filtered by a
/// stream, that stream's events within the range, found through the log's stream index.
struct NewestFirst {
    static let chunkSize = 512

    let log: any EventLog
    let positions: ClosedRange<UInt64>
    let stream: String?
    /// The newest position, or stream version, not read yet; nil once every one was.
    private var newest: UInt64?

    init(log: any EventLog, positions: ClosedRange<UInt64>, stream: String?) throws {
        self.log = log
        self.positions = positions
        self.stream = stream
        guard let stream else {
            newest = positions.upperBound
            return
        }
        // An older page's range ends just before an event of the stream (the link is made so): the stream's
        // versions before that one's, straight from the index, rather than every newer one read again.
        let after = try log.event(at: LogPosition(positions.upperBound + 1))
        newest = after.map { $0.stream.rawValue == stream ? $0.streamVersion - 1 : .max } ?? .max
    }

    /// The next chunk, older than the one before; nil when there is none.
    mutating func next() throws -> [RecordedEvent]? {
        guard let newest, newest > 0 else { return nil }
        guard let stream else {
            guard newest >= positions.lowerBound else { return nil }
            let start = max(
                positions.lowerBound, newest >= UInt64(Self.chunkSize) ? newest - UInt64(Self.chunkSize) + 1 : 1)
            self.newest = start - 1
            return try log.read(from: LogPosition(start), limit: Int(newest - start + 1)).reversed()
        }
        let events = try log.readStreamBackward(
            try StreamID(stream), from: newest == .max ? nil : newest, limit: Self.chunkSize)
        guard let oldest = events.last, oldest.position.rawValue >= positions.lowerBound else {
            self.newest = nil
            return events.isEmpty ? nil : events.filter { positions.contains($0.position.rawValue) }
        }
        self.newest = oldest.streamVersion - 1
        return events.filter { $0.position.rawValue <= positions.upperBound }
    }
}
