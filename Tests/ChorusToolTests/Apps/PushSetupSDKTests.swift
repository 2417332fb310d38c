import ChorusClient
import ChorusTestSupport
import Foundation
import Testing

/// What an iOS app does for pushes, through the SDK alone: its token registered at each launch, the settings screen,
/// and a logout that stops the phone's pushes.
@Suite("Push setup, through the SDK")
struct PushSetupSDKTests {
    @Test("the APNs token registers one device at every launch, settings change in one call, logout forgets the device")
    func pushSetup() async throws {
        try await AppServer.run { server in
            let (ana, _) = try await server.user("Ana")
            // What `didRegisterForRemoteNotificationsWithDeviceToken` hands the app: 32 bytes.
            let token = Data((0..<32).map { _ in UInt8.random(in: 0...255) })
            let device = try await ana.registerDevice(token: token, service: .apns(sandbox: true), locale: "ko-KR")
            #expect(device.platform == .apns && device.environment == .sandbox && device.locale == "ko-KR")
            let relaunch = try await ana.registerDevice(token: token, service: .apns(sandbox: true), locale: "ko-KR")
            #expect(relaunch.id == device.id, "the same token is the same device")
            let android = try await ana.registerDevice(token: "fcm-token:APA91b_x", service: .fcm)
            #expect(try await ana.devices().first(10).map(\.id) == [device.id, android.id])

            #expect(try await ana.pushSettings().likes == .all)
            let settings = try await ana.changePushSettings(likes: .off, messages: .followed)
            #expect(settings.likes == .off && settings.messages == .followed && settings.comments == .all)
            #expect(try await ana.pushSettings() == settings)

            try await ana.forgetDevice(android.id)
            let email = try #require(try await ana.me().email)
            try await ana.logOut(forgettingDevice: device.id)
            let again = server.client()
            try await again.logIn(email: email, password: "secret-password")
            #expect(try await again.devices().first(10).isEmpty)
        }
    }
}
