import ChorusLog

/// Registers a phone's push token for a user. The same token again is the same device (refreshed); a token another
/// user registered moves to this one, as a phone that changed hands or accounts.
struct RegisterDevice: Decision {
    /// How many devices an account may have: enough for every phone and tablet a person keeps, few enough that a
    /// client registering a new token at every launch by mistake is told so.
    static let maximumDevices = 100

    let user: UserID
    let device: DeviceID
    let platform: PushPlatform
    let environment: PushEnvironment
    let locale: String?
    let token: String

    static func prepare(
        user: UserID, platform: PushPlatform, token: String, environment: PushEnvironment?, locale: String?
    ) throws(DomainError) -> PreparedCommand {
        let token = try Validate.deviceToken(token)
        if platform == .fcm, environment == .sandbox {
            throw DomainError(.invalidField, "environment: FCM has no sandbox; leave it out or send production")
        }
        let locale = try locale.map { (locale) throws(DomainError) in try Validate.locale(locale) }
        let decision = RegisterDevice(
            user: user, device: .make(), platform: platform, environment: environment ?? .production, locale: locale,
            token: token)
        return PreparedCommand(
            caller: user.rawValue, tag: 40,
            fields: {
                $0.write(platform.rawValue)
                $0.write(DeviceRegistered.tokenKey(platform: platform, token: token))
                $0.write(decision.environment.rawValue)
                $0.write(locale)
            }, decision: decision)
    }

    func decide(in context: DecisionContext) throws -> CommandResult {
        try context.requireUser(user)
        let tokenKey = DeviceRegistered.tokenKey(platform: platform, token: token)
        let holder = try context.state.device(withTokenKey: tokenKey, in: context.transaction)
        var events: [DomainEvent] = []
        var device = self.device
        if let holder, holder.user == user {
            device = holder.device
        } else {
            guard try context.state.devices(of: user, in: context.transaction).count < Self.maximumDevices else {
                throw DomainError(
                    .invalidField, "an account has at most \(Self.maximumDevices) devices: forget one before adding one"
                )
            }
            if let holder {
                events.append(
                    .deviceForgotten(
                        DeviceForgotten(
                            user: holder.user, device: holder.device, tokenKey: tokenKey, reason: .movedToAnotherUser)))
            }
        }
        events.append(
            .deviceRegistered(
                DeviceRegistered(
                    user: user, device: device, platform: platform, environment: environment, locale: locale,
                    token: token, tokenKey: tokenKey)))
        let recorded = try context.recordEach(events)
        return CommandResult(position: recorded.position, appended: true, createdID: device.rawValue)
    }
}

/// A user forgets one of their devices (`byUser`: it must be theirs), or the push sender one whose token APNs or FCM
/// refused for good (`refusedByProvider`: nothing when it is gone already). It gets no more pushes.
struct ForgetDevice: Decision {
    let user: UserID
    let device: DeviceID
    let reason: DeviceForgetting

    static func prepare(user: UserID, device: DeviceID, reason: DeviceForgetting) -> PreparedCommand {
        PreparedCommand(
            caller: user.rawValue, tag: reason == .byUser ? 41 : 43, fields: { $0.write(device) },
            decision: ForgetDevice(user: user, device: device, reason: reason))
    }

    func decide(in context: DecisionContext) throws -> CommandResult {
        guard let tokenKey = try context.state.tokenKey(of: device, of: user, in: context.transaction) else {
            guard reason == .byUser else { return context.unchanged }
            throw DomainError(.notFound, "no device \(device) of this account")
        }
        return try context.record(
            .deviceForgotten(DeviceForgotten(user: user, device: device, tokenKey: tokenKey, reason: reason)))
    }
}

/// A user changes what they get pushes about.
struct ChangePushSettings: Decision {
    let user: UserID
    let changes: [PushKind: PushLevel]

    static func prepare(user: UserID, changes: [PushKind: PushLevel]) -> PreparedCommand {
        PreparedCommand(
            caller: user.rawValue, tag: 42,
            fields: { fields in
                for kind in PushKind.allCases {
                    fields.write(kind.rawValue)
                    fields.write(changes[kind]?.rawValue)
                }
            }, decision: ChangePushSettings(user: user, changes: changes))
    }

    func decide(in context: DecisionContext) throws -> CommandResult {
        try context.requireUser(user)
        guard !changes.isEmpty else { return context.unchanged }
        return try context.record(.pushSettingsChanged(PushSettingsChanged(user: user, changes: changes)))
    }
}

extension Validate {
    /// An APNs token is 64 hexadecimal digits; an FCM token some 150 to 200 characters of letters, digits, `-`, `_` and
    /// `:`. Either is refused when empty, longer than 4,096 bytes, or holding anything else.
    static func deviceToken(_ token: String) throws(DomainError) -> String {
        guard !token.isEmpty, token.utf8.count <= 4096,
            token.utf8.allSatisfy({ isLetterOrDigit($0) || "-_:.".utf8.contains($0) })
        else {
            throw DomainError(
                .invalidField, "token: 1 to 4,096 letters, digits, '-', '_', ':' or '.', as APNs or FCM gave it")
        }
        return token
    }

    /// A BCP 47 language tag such as `ko-KR`: at most 35 letters, digits and hyphens.
    static func locale(_ locale: String) throws(DomainError) -> String {
        guard !locale.isEmpty, locale.utf8.count <= 35,
            locale.utf8.allSatisfy({ isLetterOrDigit($0) || "-_".utf8.contains($0) })
        else { throw DomainError(.invalidField, "locale: a language tag such as ko-KR, at most 35 characters") }
        return locale
    }

    private static func isLetterOrDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "A")...UInt8(ascii: "Z"):
            true
        default: false
        }
    }
}
