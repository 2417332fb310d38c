import Foundation
import OpenAPIRuntime

/// A phone registered for pushes, without its token.
public typealias Device = Components.Schemas.Device
/// What the signed-in user gets pushes about, kind by kind.
public typealias PushSettings = Components.Schemas.PushSettings
/// Whose acts of one kind are pushed: `all`, `followed` (users the recipient follows) or `off`.
public typealias PushLevel = Components.Schemas.PushLevel

/// Pushes: the device's token registered once per launch, the settings screen in one call each way.
extension ChorusClient {
    /// Which push service a token is from.
    public enum PushService: Sendable {
        /// Apple's, with the token `application(_:didRegisterForRemoteNotificationsWithDeviceToken:)` gives;
        /// `sandbox` for a development build (what Xcode installs), `production` for TestFlight and the App Store.
        case apns(sandbox: Bool)
        /// Firebase Cloud Messaging's, with the registration token `Messaging.messaging().token()` gives.
        case fcm
    }

    /// Registers this device for pushes: call it whenever the app gets its token (at every launch). The same token
    /// again is the same device; a token another account registered on this phone moves to the signed-in one.
    @discardableResult
    public func registerDevice(
        token: Data, service: PushService = .apns(sandbox: false), locale: String? = Locale.current.identifier
    ) async throws -> Device {
        try await registerDevice(
            token: token.map { String(format: "%02x", $0) }.joined(), service: service, locale: locale)
    }

    /// ``registerDevice(token:service:locale:)-(Data,_,_)`` with the token as text: APNs' hexadecimal digits, or FCM's
    /// registration token.
    @discardableResult
    public func registerDevice(
        token: String, service: PushService, locale: String? = Locale.current.identifier
    ) async throws -> Device {
        typealias Payload = Operations.RegisterDevice.Input.Body.JsonPayload
        let platform: Payload.PlatformPayload
        let environment: Payload.EnvironmentPayload?
        switch service {
        case .apns(let sandbox): (platform, environment) = (.apns, sandbox ? .sandbox : .production)
        case .fcm: (platform, environment) = (.fcm, nil)
        }
        let body = Operations.RegisterDevice.Input.Body.json(
            .init(environment: environment, locale: locale, platform: platform, token: token))
        return try await unwrapping {
            let output = try await api.registerDevice(body: body)
            if case .ok(let known) = output { return try known.body.json }
            return try output.created.body.json
        }
    }

    /// The signed-in user's devices, oldest first.
    public func devices() -> Pages<Device> {
        Pages { cursor in
            let page = try await unwrapping {
                try await self.api.myDevices(query: .init(cursor: cursor)).ok.body.json
            }
            return (page.items, page.nextCursor)
        }
    }

    /// Forgets one of the signed-in user's devices: it gets no more pushes.
    public func forgetDevice(_ id: String) async throws {
        _ = try await unwrapping { try await api.forgetDevice(path: .init(id: id)).noContent }
    }

    /// What the signed-in user gets pushes about.
    public func pushSettings() async throws -> PushSettings {
        try await unwrapping { try await api.myPushSettings().ok.body.json }
    }

    /// Changes the kinds given; the others stay as they are. Answers every kind's level after the change.
    @discardableResult
    public func changePushSettings(
        likes: PushLevel? = nil, comments: PushLevel? = nil, follows: PushLevel? = nil, reposts: PushLevel? = nil,
        mentions: PushLevel? = nil, messages: PushLevel? = nil
    ) async throws -> PushSettings {
        try await unwrapping {
            try await api.changePushSettings(
                body: .json(
                    .init(
                        comments: comments, follows: follows, likes: likes, mentions: mentions, messages: messages,
                        reposts: reposts))
            ).ok.body.json
        }
    }
}
