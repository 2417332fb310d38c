import ChorusLog
import Crypto

/// Which push service reaches a device: Apple's APNs or Firebase Cloud Messaging.
public enum PushPlatform: String, Sendable, Hashable, CaseIterable {
    case apns, fcm
}

/// Which of APNs' two hosts a device's token belongs to; FCM devices are always `production`.
public enum PushEnvironment: String, Sendable, Hashable, CaseIterable {
    case production, sandbox
}

/// What a user gets pushes about, each set on its own (``PushLevel``).
public enum PushKind: String, Sendable, Hashable, CaseIterable {
    case likes, comments, follows, reposts, mentions, messages
}

/// Whose acts of one kind are pushed: everyone's, only those of users the recipient follows, or none.
public enum PushLevel: String, Sendable, Hashable, CaseIterable {
    case all, followed, off
}

/// A user registered a phone's push token. The token is sealed under the user's key (it goes with their erasure);
/// `tokenKey`, a SHA-256 of the platform and token, finds the device the token is registered as. Registering a known
/// token again appends this again with the same device: its `lastSeenAt`, environment and locale change.
public struct DeviceRegistered: Sendable, Hashable {
    public var user: UserID
    public var device: DeviceID
    public var platform: PushPlatform
    public var environment: PushEnvironment
    public var locale: String?
    public var token: String
    public var tokenKey: String

    public init(
        user: UserID, device: DeviceID, platform: PushPlatform, environment: PushEnvironment, locale: String?,
        token: String, tokenKey: String
    ) {
        self.user = user
        self.device = device
        self.platform = platform
        self.environment = environment
        self.locale = locale
        self.token = token
        self.tokenKey = tokenKey
    }

    /// The key a token is found by: a hash, since the token itself is sealed personal data.
    public static func tokenKey(platform: PushPlatform, token: String) -> String {
        Validate.hex(SHA256.hash(data: Array("\(platform.rawValue)\u{0}\(token)".utf8)))
    }
}

/// Why a device stopped getting pushes.
public enum DeviceForgetting: String, Sendable, Hashable, CaseIterable {
    /// Its user forgot it (`DELETE /v1/me/devices/{id}`), or logged out with it.
    case byUser = "by_user"
    /// Another user registered its token: the phone changed hands.
    case movedToAnotherUser = "moved"
    /// APNs or FCM answered that the token is no longer valid.
    case refusedByProvider = "refused"
    /// Its user's account was deleted.
    case accountDeleted = "account_deleted"
}

/// A device no longer gets pushes; `tokenKey` is the key of its token (``DeviceRegistered/tokenKey``).
public struct DeviceForgotten: Sendable, Hashable {
    public var user: UserID
    public var device: DeviceID
    public var tokenKey: String
    public var reason: DeviceForgetting

    public init(user: UserID, device: DeviceID, tokenKey: String, reason: DeviceForgetting) {
        self.user = user
        self.device = device
        self.tokenKey = tokenKey
        self.reason = reason
    }
}

/// A user changed what they get pushes about: the kinds named, to these levels; the others stay as they were.
public struct PushSettingsChanged: Sendable, Hashable {
    public var user: UserID
    public var changes: [PushKind: PushLevel]

    public init(user: UserID, changes: [PushKind: PushLevel]) {
        self.user = user
        self.changes = changes
    }
}

extension DeviceRegistered: StoredEvent {
    static let typeName = "DeviceRegistered"
    static let schemaVersion: UInt16 = 1
    var stream: StreamID { .user(user) }
    var domainEvent: DomainEvent { .deviceRegistered(self) }

    func encode(to payload: inout PayloadWriter, keys: any PersonalDataKeys) throws {
        payload.write(user)
        payload.write(device)
        payload.write(platform.rawValue)
        payload.write(environment.rawValue)
        payload.write(locale)
        payload.write(tokenKey)
        try payload.writeSealed(by: user, in: Self.typeName, keys: keys) { $0.write(token) }
    }

    init(from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys) throws {
        let user = try payload.read(UserID.self)
        let device = try payload.read(DeviceID.self)
        guard let platform = PushPlatform(rawValue: try payload.readString()),
            let environment = PushEnvironment(rawValue: try payload.readString())
        else { throw PayloadError.badFlag(0) }
        let locale = try payload.readOptionalString()
        let tokenKey = try payload.readString()
        var fields = try payload.openSealed(by: user, in: Self.typeName, keys: keys)
        self.init(
            user: user, device: device, platform: platform, environment: environment, locale: locale,
            token: try fields?.readString() ?? "", tokenKey: tokenKey)
        try fields?.finish()
    }

    func changeState(_ state: DecisionState, at position: LogPosition, in changes: inout DecisionState.ChangeList) {
        changes.put(state.deviceTokens, .init(tokenKey), text: "\(user.rawValue)\u{0}\(device.rawValue)")
        changes.put(state.devices, .init(user.rawValue, device.rawValue), text: tokenKey)
    }
}

extension DeviceForgotten: StoredEvent {
    static let typeName = "DeviceForgotten"
    static let schemaVersion: UInt16 = 1
    var stream: StreamID { .user(user) }
    var domainEvent: DomainEvent { .deviceForgotten(self) }

    func encode(to payload: inout PayloadWriter, keys: any PersonalDataKeys) throws {
        payload.write(user)
        payload.write(device)
        payload.write(tokenKey)
        payload.write(reason.rawValue)
    }

    init(from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys) throws {
        let user = try payload.read(UserID.self)
        let device = try payload.read(DeviceID.self)
        let tokenKey = try payload.readString()
        guard let reason = DeviceForgetting(rawValue: try payload.readString()) else { throw PayloadError.badFlag(0) }
        self.init(user: user, device: device, tokenKey: tokenKey, reason: reason)
    }

    func changeState(_ state: DecisionState, at position: LogPosition, in changes: inout DecisionState.ChangeList) {
        changes.remove(state.devices, .init(user.rawValue, device.rawValue))
        // A token that moved to another user is theirs now: only this user's hold on it goes.
        if reason != .movedToAnotherUser { changes.remove(state.deviceTokens, .init(tokenKey)) }
    }
}

extension PushSettingsChanged: StoredEvent {
    static let typeName = "PushSettingsChanged"
    static let schemaVersion: UInt16 = 1
    var stream: StreamID { .user(user) }
    var domainEvent: DomainEvent { .pushSettingsChanged(self) }

    func encode(to payload: inout PayloadWriter, keys: any PersonalDataKeys) throws {
        payload.write(user)
        let kinds = PushKind.allCases.filter { changes[$0] != nil }
        payload.write(UInt8(kinds.count))
        for kind in kinds {
            payload.write(kind.rawValue)
            payload.write(changes[kind]?.rawValue ?? "")
        }
    }

    init(from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys) throws {
        let user = try payload.read(UserID.self)
        var changes: [PushKind: PushLevel] = [:]
        for _ in 0..<(try payload.readByte()) {
            guard let kind = PushKind(rawValue: try payload.readString()),
                let level = PushLevel(rawValue: try payload.readString())
            else { throw PayloadError.badFlag(0) }
            changes[kind] = level
        }
        self.init(user: user, changes: changes)
    }
}
