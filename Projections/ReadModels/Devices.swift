import ChorusDomain
import ChorusLog
import ChorusStorage

/// Each user's registered devices and push settings: what `GET /v1/me/devices` and `/v1/me/push-settings` show, and
/// whom a push goes to. A device's token is kept here in plain, for sending; it is never shown to a client, and it
/// goes with the device (forgotten, moved to another user, or its account deleted).
struct Devices: ReadModel {
    /// user, device → ``Device``
    static let devices: StoreTableDefinition = "devices"
    /// user → one byte per ``PushKind`` in its order: the index of its ``PushLevel`` (no entry: every kind `all`)
    static let pushSettings: StoreTableDefinition = "push-settings"
    static let tables = [devices, pushSettings]
    /// No model reads them while a build replays the log.
    static let tablesLoadedInKeyOrder = [devices, pushSettings]

    let devices: StoreTable
    let pushSettings: StoreTable

    init(store: KeyValueStore) {
        devices = store.table(Self.devices)
        pushSettings = store.table(Self.pushSettings)
    }

    func apply(_ event: DomainEvent, at envelope: EventEnvelope, in transaction: StoreTransaction) throws {
        switch event {
        case .deviceRegistered(let event):
            let key = Self.key(event.user, event.device)
            let known = try transaction.withValue(for: key, in: devices) { try $0.map { try Device(decoding: $0) } }
            let device = Device(
                id: event.device, platform: event.platform, environment: event.environment, locale: event.locale,
                createdAt: known?.createdAt ?? envelope.recordedAt, lastSeenAt: envelope.recordedAt,
                registeredAt: known?.registeredAt ?? envelope.position, token: event.token)
            try transaction.put(device.encoded(), for: key, in: devices)
        case .deviceForgotten(let event):
            try transaction.delete(Self.key(event.user, event.device), in: devices)
        case .pushSettingsChanged(let event):
            let key = ProjectionKey(event.user).bytes
            var levels =
                try transaction.withValue(for: key, in: pushSettings) { $0.map(Array.init) }
                ?? Array(repeating: 0, count: PushKind.allCases.count)
            for (kind, level) in event.changes {
                guard let place = PushKind.allCases.firstIndex(of: kind),
                    let index = PushLevel.allCases.firstIndex(of: level), place < levels.count
                else { continue }
                levels[place] = UInt8(index)
            }
            try transaction.put(levels, for: key, in: pushSettings)
        case .accountDeleted(let event):
            try transaction.delete(ProjectionKey(event.user).bytes, in: pushSettings)
        default:
            break
        }
    }

    static func key(_ user: UserID, _ device: DeviceID) -> [UInt8] {
        var key = ProjectionKey(user)
        key.append(device)
        return key.bytes
    }
}

/// A registered device, as its user sees it (without its token) and as pushes go to it.
public struct Device: Sendable, Hashable {
    public var id: DeviceID
    public var platform: PushPlatform
    public var environment: PushEnvironment
    public var locale: String?
    /// When it was first registered, and when last.
    public var createdAt: EventTime
    public var lastSeenAt: EventTime
    /// The position of its first registration: a registration answered with this position made the device.
    public var registeredAt: LogPosition
    /// The token APNs or FCM gave it: for sending, never for showing.
    package var token: String

    func encoded() -> [UInt8] {
        var writer = PayloadWriter()
        writer.write(id)
        writer.write(platform.rawValue)
        writer.write(environment.rawValue)
        writer.write(locale)
        writer.write(createdAt.millisecondsSince1970)
        writer.write(lastSeenAt.millisecondsSince1970)
        writer.write(registeredAt.rawValue)
        writer.write(token)
        return writer.bytes
    }

    init(
        id: DeviceID, platform: PushPlatform, environment: PushEnvironment, locale: String?, createdAt: EventTime,
        lastSeenAt: EventTime, registeredAt: LogPosition, token: String
    ) {
        (self.id, self.platform, self.environment, self.locale) = (id, platform, environment, locale)
        (self.createdAt, self.lastSeenAt, self.registeredAt, self.token) = (createdAt, lastSeenAt, registeredAt, token)
    }

    init(decoding bytes: UnsafeRawBufferPointer) throws {
        var reader = PayloadReader(Array(bytes))
        id = try reader.read(DeviceID.self)
        guard let platform = PushPlatform(rawValue: try reader.readString()),
            let environment = PushEnvironment(rawValue: try reader.readString())
        else { throw ProjectionError.inconsistent("a device record with an unknown platform or environment") }
        (self.platform, self.environment) = (platform, environment)
        locale = try reader.readOptionalString()
        createdAt = EventTime(millisecondsSince1970: try reader.readInt64())
        lastSeenAt = EventTime(millisecondsSince1970: try reader.readInt64())
        registeredAt = LogPosition(try reader.readUInt64())
        token = try reader.readString()
        try reader.finish()
    }
}

extension ReadView {
    /// `user`'s devices, oldest first.
    public func devices(of user: UserID, page: PageRequest) throws -> Page<Device> {
        try transaction.page(
            models.devices.devices, prefix: ProjectionKey(user).prefix(), order: .oldestFirst, request: page
        ) { _, value in try Device(decoding: value) }
    }

    /// Every device of `user`, oldest first: where a push to them goes.
    public func allDevices(of user: UserID) throws -> [Device] {
        var found: [Device] = []
        try transaction.scan(models.devices.devices, prefix: ProjectionKey(user).prefix()) { _, value in
            found.append(try Device(decoding: value))
            return true
        }
        return found
    }

    /// One of `user`'s devices; nil when they have no such device.
    public func device(_ device: DeviceID, of user: UserID) throws -> Device? {
        try transaction.withValue(for: Devices.key(user, device), in: models.devices.devices) {
            try $0.map { try Device(decoding: $0) }
        }
    }

    /// Every user's devices: for the admin routes.
    public func deviceCount() throws -> Int {
        try transaction.count(models.devices.devices)
    }

    /// What `user` gets pushes about, every kind.
    public func pushSettings(of user: UserID) throws -> [PushKind: PushLevel] {
        let levels = try transaction.withValue(for: ProjectionKey(user).bytes, in: models.devices.pushSettings) {
            $0.map(Array.init)
        }
        var settings: [PushKind: PushLevel] = [:]
        for (place, kind) in PushKind.allCases.enumerated() {
            let index = levels.flatMap { place < $0.count ? Int($0[place]) : nil } ?? 0
            settings[kind] = index < PushLevel.allCases.count ? PushLevel.allCases[index] : .all
        }
        return settings
    }
}
