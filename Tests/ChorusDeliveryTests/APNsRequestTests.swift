import ChorusDelivery
import Foundation
import Testing

@Suite("Push: APNs requests and answers")
struct APNsRequestTests {
    private static let registeredAt = Date(timeIntervalSince1970: 1_800_000_000)

    @Test("an alert and a silent badge update: the path and every header of the contract")
    func request() {
        let id = UUID()
        let expiration = Date(timeIntervalSince1970: 1_800_086_400.9)
        let payload = Array(#"{"aps":{"alert":{"body":"Bo liked your post"},"badge":3}}"#.utf8)
        let alert = APNsRequest(
            deviceToken: "a1b2c3", topic: "app.chorus.Instagram", pushType: .alert, id: id, collapseID: "likes:P1",
            expiration: expiration, payload: payload
        ).httpRequest(base: "https://api.sandbox.push.apple.com", bearer: "eyJ.token")
        #expect(alert.url == "https://api.sandbox.push.apple.com/3/device/a1b2c3")
        #expect(alert.method == .POST)
        #expect(alert.headers["authorization"] == ["bearer eyJ.token"])
        #expect(alert.headers["apns-topic"] == ["app.chorus.Instagram"])
        #expect(alert.headers["apns-push-type"] == ["alert"])
        #expect(alert.headers["apns-priority"] == ["10"])
        #expect(alert.headers["apns-expiration"] == ["1800086400"])
        #expect(alert.headers["apns-id"] == [id.uuidString.lowercased()])
        #expect(alert.headers["apns-collapse-id"] == ["likes:P1"])

        let badge = APNsRequest(
            deviceToken: "a1b2c3", topic: "app.chorus.Instagram", pushType: .background, id: id,
            expiration: expiration, payload: payload
        ).httpRequest(base: "https://api.push.apple.com", bearer: "eyJ.token")
        #expect(badge.headers["apns-push-type"] == ["background"])
        #expect(badge.headers["apns-priority"] == ["5"])
        #expect(badge.headers["apns-collapse-id"].isEmpty)
    }

    private static func outcome(_ status: Int, _ body: String = "", retryAfter: String? = nil) -> PushOutcome {
        PushOutcome(
            apnsStatus: status, body: Array(body.utf8), retryAfter: retryAfter, deviceRegisteredAt: registeredAt)
    }

    @Test("every answer of Apple's list: delivered, a dead token forgotten, the provider token renewed, retries, drops")
    func answers() {
        #expect(Self.outcome(200) == .delivered)
        // Unregistered since after the device registered: forgotten. Since before: the device registered again.
        #expect(
            Self.outcome(410, #"{"reason":"Unregistered","timestamp":1800000001000}"#)
                == .forgetDevice(reason: "Unregistered"))
        #expect(Self.outcome(410, #"{"reason":"Unregistered"}"#) == .forgetDevice(reason: "Unregistered"))
        #expect(
            Self.outcome(410, #"{"reason":"Unregistered","timestamp":1799999999000}"#) == .drop(reason: "Unregistered"))
        #expect(Self.outcome(400, #"{"reason":"BadDeviceToken"}"#) == .forgetDevice(reason: "BadDeviceToken"))
        #expect(
            Self.outcome(400, #"{"reason":"DeviceTokenNotForTopic"}"#)
                == .forgetDevice(reason: "DeviceTokenNotForTopic"))
        #expect(Self.outcome(403, #"{"reason":"ExpiredProviderToken"}"#) == .renewCredentials)
        #expect(
            Self.outcome(403, #"{"reason":"InvalidProviderToken"}"#)
                == .retry(after: nil, reason: "InvalidProviderToken"))
        #expect(
            Self.outcome(429, #"{"reason":"TooManyRequests"}"#, retryAfter: "30")
                == .retry(after: .seconds(30), reason: "TooManyRequests"))
        #expect(Self.outcome(503, "", retryAfter: " 5 ") == .retry(after: .seconds(5), reason: "HTTP 503"))
        #expect(Self.outcome(500, "not json") == .retry(after: nil, reason: "HTTP 500"))
        #expect(Self.outcome(400, #"{"reason":"TopicDisallowed"}"#) == .retry(after: nil, reason: "TopicDisallowed"))
        #expect(Self.outcome(413, #"{"reason":"PayloadTooLarge"}"#) == .drop(reason: "PayloadTooLarge"))
        #expect(Self.outcome(400, #"{"reason":"BadCollapseId"}"#) == .drop(reason: "BadCollapseId"))
    }
}
