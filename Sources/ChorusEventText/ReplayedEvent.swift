import ChorusDomain
import ChorusLog
import ChorusText
import Foundation

/// A recorded event for people and for tools such as `jq`: its envelope and its decoded fields, read off the event's
/// own types, so that a new event type shows without code here. Password hashes are left out. Holds what decoding
/// made; the recorded event itself is lent to each method rather than kept (a copy of it retained its strings and
/// payload, and released them).
package struct ReplayedEvent {
    /// The event decoded, or why it does not.
    private let decoding: Decoding
    /// Every user the event names, for `--user` (empty unless asked for).
    package let users: Set<String>

    /// A field's name: a literal for the events most logs hold, a label read by reflection for the rest.
    package enum FieldName: ExpressibleByStringLiteral {
        case literal(StaticString)
        case label(String)

        package init(stringLiteral name: StaticString) { self = .literal(name) }

        package var text: String {
            switch self {
            case .literal(let name): "\(name)"
            case .label(let name): name
            }
        }
    }

    /// A field's value as JSON shows it. Only `labelled` is boxed: an indirect enum allocates for every value.
    package enum FieldValue {
        case text(String)
        /// A user's id: text, and a user the event names (`--user`).
        case user(String)
        case integer(Int64)
        case flag(Bool)
        case null
        /// A case with a value, such as `profileImage: {set: …}`.
        indirect case labelled(String, FieldValue)
        /// A list, such as a post's images.
        case list([FieldValue])
        /// A value of several fields, sorted by name, such as one of a post's images.
        case object([(name: String, value: FieldValue)])

        /// Adds the users this value names to `users`.
        package func collectUsers(into users: inout Set<String>) {
            switch self {
            case .user(let user): users.insert(user)
            case .labelled(_, let inner): inner.collectUsers(into: &users)
            case .list(let values): for value in values { value.collectUsers(into: &users) }
            case .object(let fields): for field in fields { field.value.collectUsers(into: &users) }
            case .text, .integer, .flag, .null: break
            }
        }
    }

    private enum Decoding {
        case decoded(DomainEvent)
        case undecodable(problem: String)
    }

    private static let redacted: Set<String> = ["passwordHash"]

    /// `namingUsers`: whether to collect ``users``.
    package init(
        decoding event: borrowing RecordedEvent, keys: borrowing any PersonalDataKeys, namingUsers: Bool = true
    ) {
        var users: Set<String> = []
        do {
            let decoded = try DomainEvent(decoding: event, keys: keys)
            if namingUsers { Self.forEachField(of: decoded) { _, value in value.collectUsers(into: &users) } }
            decoding = .decoded(decoded)
        } catch {
            decoding = .undecodable(problem: "\(error)")
        }
        self.users = users
    }

    /// Calls `body` with each field of `decoded`, sorted by name. Written straight from the event rather than gathered
    /// into an array first: the array, made and destroyed for every event, was most of what a replay spent
    /// destroying what it made of each event.
    private static func forEachField(of decoded: DomainEvent, _ body: (FieldName, FieldValue) -> Void) {
        guard !forEachCommonField(of: decoded, body) else { return }
        // A DomainEvent is a case whose one value is the event's struct.
        let payload = Mirror(reflecting: decoded).children.first?.value ?? decoded
        var fields: [(name: String, value: FieldValue)] = []
        for child in Mirror(reflecting: payload).children {
            guard let label = child.label else { continue }
            fields.append((label, redacted.contains(label) ? .text("(not shown)") : value(child.value)))
        }
        for field in fields.sorted(by: { $0.name < $1.name }) { body(.label(field.name), field.value) }
    }

    /// The fields of the events a log holds most of, sorted by name, as the reflection above would give them but
    /// several times faster (reflection was half of `chorus replay --json`); false for every other type, which the
    /// reflection reads.
    private static func forEachCommonField(of event: DomainEvent, _ body: (FieldName, FieldValue) -> Void) -> Bool {
        forEachAccountField(of: event, body) || forEachPostField(of: event, body)
            || forEachEngagementField(of: event, body) || forEachGraphField(of: event, body)
            || forEachMessagingField(of: event, body)
    }

    private static func user(_ id: UserID) -> FieldValue { .user(id.rawValue) }
    private static func user(_ id: UserID?) -> FieldValue { id.map { .user($0.rawValue) } ?? .null }
    private static func id(_ id: (some ChorusIdentifier)?) -> FieldValue { id.map { .text($0.rawValue) } ?? .null }
    private static func text(_ text: String?) -> FieldValue { text.map { .text($0) } ?? .null }
    private static func image(_ image: PostImage) -> FieldValue {
        .object([("alt", text(image.alt)), ("id", id(image.id))])
    }
    private static func position(_ position: LogPosition?) -> FieldValue {
        position.map { .integer(Int64($0.rawValue)) } ?? .null
    }

    private static func forEachAccountField(of event: DomainEvent, _ body: (FieldName, FieldValue) -> Void) -> Bool {
        switch event {
        case .userRegistered(let event):
            body("bio", .text(event.bio))
            body("email", .text(event.email))
            body("major", .text(event.major))
            body("name", .text(event.name))
            body("passwordHash", .text("(not shown)"))
            body("user", user(event.user))
        case .profileEdited(let event):
            body("bio", text(event.bio))
            body("handle", text(event.handle))
            body("isPrivate", event.isPrivate.map(FieldValue.flag) ?? .null)
            body("major", text(event.major))
            body("name", text(event.name))
            // As the reflection writes a case: with its value under its name, or as its name alone.
            switch event.profileImage {
            case nil: body("profileImage", .null)
            case .remove: body("profileImage", .text("remove"))
            case .set(let media): body("profileImage", .labelled("set", .text(media.rawValue)))
            }
            body("user", user(event.user))
        case .sessionStarted(let event):
            body("expiresAt", .text(event.expiresAt.rfc3339))
            body("session", id(event.session))
            body("user", user(event.user))
        case .sessionEnded(let event):
            body("session", id(event.session))
            body("user", user(event.user))
        default:
            return false
        }
        return true
    }

    private static func forEachPostField(of event: DomainEvent, _ body: (FieldName, FieldValue) -> Void) -> Bool {
        switch event {
        case .postCreated(let event):
            body("author", user(event.author))
            body("caption", .text(event.caption))
            body("media", .list(event.media.map(image)))
            body("post", id(event.post))
            body("repostOf", id(event.repostOf))
            body("text", .text(event.text))
        case .postEdited(let event):
            body("alts", event.alts.map { .list($0.map(text)) } ?? .null)
            body("author", user(event.author))
            body("caption", text(event.caption))
            body("post", id(event.post))
            body("text", text(event.text))
        case .postDeleted(let event):
            body("author", user(event.author))
            body("post", id(event.post))
            body("postedAt", position(event.postedAt))
            body("repostOf", id(event.repostOf))
        default:
            return false
        }
        return true
    }

    private static func forEachEngagementField(of event: DomainEvent, _ body: (FieldName, FieldValue) -> Void) -> Bool {
        switch event {
        case .liked(let event):
            body("post", id(event.post))
            body("postAuthor", user(event.postAuthor))
            body("user", user(event.user))
        case .unliked(let event):
            body("likedAt", position(event.likedAt))
            body("post", id(event.post))
            body("postAuthor", user(event.postAuthor))
            body("user", user(event.user))
        case .reposted(let event):
            body("post", id(event.post))
            body("postAuthor", user(event.postAuthor))
            body("user", user(event.user))
        case .unreposted(let event):
            body("post", id(event.post))
            body("postAuthor", user(event.postAuthor))
            body("repostedAt", position(event.repostedAt))
            body("user", user(event.user))
        case .commentAdded(let event):
            body("author", user(event.author))
            body("comment", id(event.comment))
            body("post", id(event.post))
            body("postAuthor", user(event.postAuthor))
            body("text", .text(event.text))
        case .commentDeleted(let event):
            body("author", user(event.author))
            body("comment", id(event.comment))
            body("commentedAt", position(event.commentedAt))
            body("post", id(event.post))
            body("postAuthor", user(event.postAuthor))
        default:
            return false
        }
        return true
    }

    private static func forEachGraphField(of event: DomainEvent, _ body: (FieldName, FieldValue) -> Void) -> Bool {
        switch event {
        case .followed(let event):
            body("followee", user(event.followee))
            body("follower", user(event.follower))
            body("requestedAt", position(event.requestedAt))
        case .unfollowed(let event):
            body("followedAt", position(event.followedAt))
            body("followee", user(event.followee))
            body("follower", user(event.follower))
        case .blocked(let event):
            body("blocked", user(event.blocked))
            body("blocker", user(event.blocker))
        case .muted(let event):
            body("muted", user(event.muted))
            body("muter", user(event.muter))
        default:
            return false
        }
        return true
    }

    private static func forEachMessagingField(of event: DomainEvent, _ body: (FieldName, FieldValue) -> Void) -> Bool {
        switch event {
        case .messageSent(let event):
            body("from", user(event.from))
            body("message", id(event.message))
            body("text", .text(event.text))
            body("to", user(event.to))
        case .roomJoined(let event):
            body("room", id(event.room))
            body("user", user(event.user))
        case .roomLeft(let event):
            body("joinedAt", position(event.joinedAt))
            body("room", id(event.room))
            body("user", user(event.user))
        case .roomMessageSent(let event):
            body("from", user(event.from))
            body("message", id(event.message))
            body("room", id(event.room))
            body("text", .text(event.text))
        case .notificationsRead(let event):
            body("upTo", position(event.upTo))
            body("user", user(event.user))
        case .conversationRead(let event):
            body("partner", user(event.partner))
            body("reader", user(event.reader))
        default:
            return false
        }
        return true
    }

    /// Ids and times as their text, optionals as null, cases as their name or `{name: value}`.
    private static func value(_ value: Any) -> FieldValue {
        switch value {
        case let user as UserID: return .user(user.rawValue)
        case let text as String: return .text(text)
        case let flag as Bool: return .flag(flag)
        case let number as any BinaryInteger: return .integer(Int64(number))
        case let position as LogPosition: return .integer(Int64(position.rawValue))
        case let time as EventTime: return .text(time.rfc3339)
        case let id as any ChorusIdentifier: return .text(id.rawValue)
        default: break
        }
        let mirror = Mirror(reflecting: value)
        switch mirror.displayStyle {
        case .optional:
            guard let wrapped = mirror.children.first?.value else { return .null }
            return Self.value(wrapped)
        case .enum:
            guard let associated = mirror.children.first, let label = associated.label else { return .text("\(value)") }
            return .labelled(label, Self.value(associated.value))
        case .collection:
            return .list(mirror.children.map { Self.value($0.value) })
        case .struct:
            let fields = mirror.children.compactMap { child in child.label.map { ($0, Self.value(child.value)) } }
            return .object(fields.sorted { $0.0 < $1.0 })
        default:
            return .text("\(value)")
        }
    }

    /// `event`, the one decoded, as one JSON object, keys sorted, appended to `bytes` (without a newline).
    package func appendJSON(of event: RecordedEvent, to bytes: inout [UInt8]) {
        var object = JSONBytes(bytes: bytes)
        bytes = []
        object.open()
        object.key("actor")
        object.string(event.actor)
        object.key("commandId")
        object.uuid(event.commandID.uuid.uuid)
        object.key("correlationId")
        object.uuid(event.correlationID.uuid.uuid)
        // Matched in place: a copy of the decoded event retained every string in it, and released them.
        if case .decoded(let decoded) = decoding {
            object.key("data")
            object.open()
            Self.forEachField(of: decoded) { name, value in
                switch name {
                case .literal(let name): object.key(name)
                case .label(let name): object.key(named: name)
                }
                Self.append(value, to: &object)
            }
            object.close()
        }
        object.key("position")
        object.integer(Int64(event.position.rawValue))
        if case .undecodable(let problem) = decoding {
            object.key("problem")
            object.string(problem)
        }
        object.key("recordedAt")
        object.timestamp(event.recordedAt)
        object.key("schemaVersion")
        object.integer(Int64(event.schemaVersion))
        object.key("stream")
        object.string(event.stream.rawValue)
        object.key("streamVersion")
        object.integer(Int64(event.streamVersion))
        object.key("type")
        object.string(event.type)
        object.close()
        bytes = object.bytes
    }

    private static func append(_ value: FieldValue, to object: inout JSONBytes) {
        switch value {
        case .text(let text), .user(let text): object.string(text)
        case .integer(let number): object.integer(number)
        case .flag(let flag): object.literal(flag ? "true" : "false")
        case .null: object.literal("null")
        case .labelled(let label, let inner):
            object.open()
            object.key(named: label)
            append(inner, to: &object)
            object.close()
        case .list(let values):
            object.openList()
            for (index, value) in values.enumerated() {
                if index > 0 { object.comma() }
                append(value, to: &object)
            }
            object.closeList()
        case .object(let fields):
            object.open()
            for field in fields {
                object.key(named: field.name)
                append(field.value, to: &object)
            }
            object.close()
        }
    }

    /// The decoded fields, sorted by name, each value as ``text(of:)`` shows it; nil when the event does not decode.
    package var fields: [(name: String, value: String)]? {
        guard case .decoded(let decoded) = decoding else { return nil }
        var fields: [(name: String, value: String)] = []
        Self.forEachField(of: decoded) { name, value in fields.append((name.text, Self.plain(value))) }
        return fields
    }

    /// Why the event does not decode, if it does not.
    package var problem: String? {
        guard case .undecodable(let problem) = decoding else { return nil }
        return TerminalText.escaped(problem)
    }

    /// The decoded fields as `name=value` pairs, or why the event does not decode.
    package var fieldsText: String {
        fields.map { $0.map { "\($0.name)=\($0.value)" }.joined(separator: " ") }
            ?? "(does not decode: \(problem ?? ""))"
    }

    /// `event`, the one decoded, as one line: position, time, type, stream and version, actor, then the fields.
    package func text(of event: RecordedEvent) -> String {
        "\(event.position)  \(event.recordedAt.rfc3339)  \(TerminalText.escaped(event.type))  "
            + "\(TerminalText.escaped(event.stream.rawValue))#\(event.streamVersion)  by \(Self.actor(of: event))  "
            + fieldsText
    }

    /// Who did `event`, escaped, or `-` for no one. The envelope's text is escaped too: an imported log's records hold
    /// whatever its file held.
    package static func actor(of event: RecordedEvent) -> String {
        event.actor.isEmpty ? "-" : TerminalText.escaped(event.actor)
    }

    /// A field's value in a line for people: text escaped (``TerminalText``), and quoted when it has spaces.
    private static func plain(_ value: FieldValue) -> String {
        switch value {
        case .null: "null"
        case .text(let text), .user(let text): TerminalText.field(text)
        case .integer(let number): "\(number)"
        case .flag(let flag): "\(flag)"
        case .labelled(let label, let inner): "\(label):\(plain(inner))"
        case .list(let values): "[" + values.map(plain).joined(separator: ",") + "]"
        case .object(let fields): "{" + fields.map { "\($0.name):\(plain($0.value))" }.joined(separator: ",") + "}"
        }
    }
}
