import ChorusDomain
import ChorusLog
import Foundation

/// A recorded event for people and for tools such as `jq`: its envelope and its decoded fields, read off the event's
/// own types, so that a new event type shows without code here. Password hashes are left out.
struct ReplayedEvent {
    let event: RecordedEvent
    /// The decoded fields, sorted by name; nil when the event does not decode (`problem` says why).
    let data: [(name: String, value: FieldValue)]?
    let problem: String?
    /// Every user the event names, for `--user` (empty unless asked for).
    let users: Set<String>

    /// A field's value as JSON shows it. Only `labelled` is boxed: an indirect enum allocates for every value.
    enum FieldValue {
        case text(String)
        case integer(Int64)
        case flag(Bool)
        case null
        /// A case with a value, such as `profileImage: {set: …}`.
        indirect case labelled(String, FieldValue)
    }

    private static let redacted: Set<String> = ["passwordHash"]

    /// `namingUsers`: whether to collect ``users``.
    init(_ event: consuming RecordedEvent, keys: borrowing any PersonalDataKeys, namingUsers: Bool = true) {
        self.event = event
        do {
            // Decoded from the stored copy, so that `event` is moved into it rather than copied once more.
            let decoded = try DomainEvent(decoding: self.event, keys: keys)
            var users: Set<String> = []
            if let fields = Self.commonFields(of: decoded, users: &users, naming: namingUsers) {
                data = fields
            } else {
                // A DomainEvent is a case whose one value is the event's struct.
                let payload = Mirror(reflecting: decoded).children.first?.value ?? decoded
                var fields: [(name: String, value: FieldValue)] = []
                for child in Mirror(reflecting: payload).children {
                    guard let label = child.label else { continue }
                    let value =
                        Self.redacted.contains(label) ? .text("(not shown)") : Self.value(child.value, users: &users)
                    fields.append((label, value))
                }
                data = fields.sorted { $0.name < $1.name }
            }
            problem = nil
            self.users = users
        } catch {
            data = nil
            problem = "\(error)"
            users = []
        }
    }

    /// The fields of the events a log holds most of, sorted by name, as the reflection below would give them but
    /// several times faster (reflection was half of `chorus replay --json`); nil for every other type, which the
    /// reflection reads.
    private static func commonFields(of event: DomainEvent, users: inout Set<String>, naming: Bool)
        -> [(name: String, value: FieldValue)]?
    {
        func user(_ id: UserID) -> FieldValue {
            if naming { users.insert(id.rawValue) }
            return .text(id.rawValue)
        }
        func user(_ id: UserID?) -> FieldValue { id.map { user($0) } ?? .null }
        func id(_ id: (some ChorusIdentifier)?) -> FieldValue { id.map { .text($0.rawValue) } ?? .null }
        func text(_ text: String?) -> FieldValue { text.map { .text($0) } ?? .null }
        func position(_ position: LogPosition?) -> FieldValue { position.map { .integer(Int64($0.rawValue)) } ?? .null }
        switch event {
        case .userRegistered(let event):
            return [
                ("bio", .text(event.bio)), ("email", .text(event.email)), ("major", .text(event.major)),
                ("name", .text(event.name)), ("passwordHash", .text("(not shown)")), ("user", user(event.user)),
            ]
        case .profileEdited(let event):
            // As the reflection writes a case: with its value under its name, or as its name alone.
            let image: FieldValue =
                switch event.profileImage {
                case nil: .null
                case .remove: .text("remove")
                case .set(let media): .labelled("set", .text(media.rawValue))
                }
            return [
                ("bio", text(event.bio)), ("major", text(event.major)), ("name", text(event.name)),
                ("profileImage", image), ("user", user(event.user)),
            ]
        case .postCreated(let event):
            return [
                ("author", user(event.author)), ("caption", .text(event.caption)), ("image", id(event.image)),
                ("post", id(event.post)), ("repostOf", id(event.repostOf)), ("text", .text(event.text)),
            ]
        case .postEdited(let event):
            return [
                ("author", user(event.author)), ("caption", text(event.caption)), ("post", id(event.post)),
                ("text", text(event.text)),
            ]
        case .postDeleted(let event):
            return [
                ("author", user(event.author)), ("post", id(event.post)), ("postedAt", position(event.postedAt)),
                ("repostOf", id(event.repostOf)),
            ]
        case .liked(let event):
            return [("post", id(event.post)), ("postAuthor", user(event.postAuthor)), ("user", user(event.user))]
        case .unliked(let event):
            return [
                ("likedAt", position(event.likedAt)), ("post", id(event.post)), ("postAuthor", user(event.postAuthor)),
                ("user", user(event.user)),
            ]
        case .reposted(let event):
            return [("post", id(event.post)), ("postAuthor", user(event.postAuthor)), ("user", user(event.user))]
        case .unreposted(let event):
            return [
                ("post", id(event.post)), ("postAuthor", user(event.postAuthor)),
                ("repostedAt", position(event.repostedAt)), ("user", user(event.user)),
            ]
        case .commentAdded(let event):
            return [
                ("author", user(event.author)), ("comment", id(event.comment)), ("post", id(event.post)),
                ("postAuthor", user(event.postAuthor)), ("text", .text(event.text)),
            ]
        case .commentDeleted(let event):
            return [
                ("author", user(event.author)), ("comment", id(event.comment)),
                ("commentedAt", position(event.commentedAt)), ("post", id(event.post)),
                ("postAuthor", user(event.postAuthor)),
            ]
        case .followed(let event):
            return [("followee", user(event.followee)), ("follower", user(event.follower))]
        case .unfollowed(let event):
            return [
                ("followedAt", position(event.followedAt)), ("followee", user(event.followee)),
                ("follower", user(event.follower)),
            ]
        case .messageSent(let event):
            return [
                ("from", user(event.from)), ("message", id(event.message)), ("text", .text(event.text)),
                ("to", user(event.to)),
            ]
        case .roomJoined(let event):
            return [("room", id(event.room)), ("user", user(event.user))]
        case .roomLeft(let event):
            return [("joinedAt", position(event.joinedAt)), ("room", id(event.room)), ("user", user(event.user))]
        case .roomMessageSent(let event):
            return [
                ("from", user(event.from)), ("message", id(event.message)), ("room", id(event.room)),
                ("text", .text(event.text)),
            ]
        case .notificationsRead(let event):
            return [("upTo", position(event.upTo)), ("user", user(event.user))]
        case .conversationRead(let event):
            return [("partner", user(event.partner)), ("reader", user(event.reader))]
        case .sessionStarted(let event):
            return [
                ("expiresAt", .text(event.expiresAt.rfc3339)), ("session", id(event.session)),
                ("user", user(event.user)),
            ]
        case .sessionEnded(let event):
            return [("session", id(event.session)), ("user", user(event.user))]
        case .blocked(let event):
            return [("blocked", user(event.blocked)), ("blocker", user(event.blocker))]
        case .muted(let event):
            return [("muted", user(event.muted)), ("muter", user(event.muter))]
        default:
            return nil
        }
    }

    /// Ids and times as their text, optionals as null, cases as their name or `{name: value}`.
    private static func value(_ value: Any, users: inout Set<String>) -> FieldValue {
        switch value {
        case let user as UserID:
            users.insert(user.rawValue)
            return .text(user.rawValue)
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
            return Self.value(wrapped, users: &users)
        case .enum:
            guard let associated = mirror.children.first, let label = associated.label else { return .text("\(value)") }
            return .labelled(label, Self.value(associated.value, users: &users))
        default:
            return .text("\(value)")
        }
    }

    /// The event as one JSON object, keys sorted, appended to `bytes` (without a newline).
    func appendJSON(to bytes: inout [UInt8]) {
        var object = JSONBytes(bytes: bytes)
        bytes = []
        object.open()
        object.key("actor")
        object.string(event.actor)
        object.key("commandId")
        object.uuid(event.commandID.uuid.uuid)
        object.key("correlationId")
        object.uuid(event.correlationID.uuid.uuid)
        if let data {
            object.key("data")
            object.open()
            // By index: a loop over the fields copied each name and value out first (a retain and a release each).
            for index in data.indices {
                object.key(data[index].name)
                Self.append(data[index].value, to: &object)
            }
            object.close()
        }
        object.key("position")
        object.integer(Int64(event.position.rawValue))
        if let problem {
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
        case .text(let text): object.string(text)
        case .integer(let number): object.integer(number)
        case .flag(let flag): object.literal(flag ? "true" : "false")
        case .null: object.literal("null")
        case .labelled(let label, let inner):
            object.open()
            object.key(label)
            append(inner, to: &object)
            object.close()
        }
    }

    /// One line: position, time, type, stream and version, actor, then the fields.
    var text: String {
        let fields =
            data.map { data in data.map { "\($0.name)=\(Self.plain($0.value))" }.joined(separator: " ") }
            ?? "(does not decode: \(problem ?? "?"))"
        return "\(event.position)  \(event.recordedAt.rfc3339)  \(event.type)  "
            + "\(event.stream)#\(event.streamVersion)  by \(event.actor.isEmpty ? "-" : event.actor)  \(fields)"
    }

    private static func plain(_ value: FieldValue) -> String {
        switch value {
        case .null: "null"
        case .text(let text): text.contains(" ") || text.isEmpty ? "\"\(text)\"" : text
        case .integer(let number): "\(number)"
        case .flag(let flag): "\(flag)"
        case .labelled(let label, let inner): "\(label):\(plain(inner))"
        }
    }
}

/// Times as the HTTP API takes them (written as ``ChorusLog/EventTime/rfc3339``).
enum Timestamps {
    private static let format = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    /// `2026-11-22T12:00:00Z` or with milliseconds; nil when neither.
    static func parse(_ text: String) -> EventTime? {
        guard let date = (try? Date(text, strategy: format)) ?? (try? Date(text, strategy: .iso8601)) else {
            return nil
        }
        // To the nearest millisecond: .757 parses as .75699…
        return EventTime(millisecondsSince1970: Int64((date.timeIntervalSince1970 * 1000).rounded()))
    }
}
