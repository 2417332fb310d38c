import AsyncHTTPClient
import Foundation
import NIOCore

/// One push to one device as APNs takes it (Apple's "Sending notification requests to APNs"): `POST /3/device/<token>`
/// with the headers below and the JSON payload.
package struct APNsRequest: Sendable {
    package enum PushType: String, Sendable {
        /// Shown to the user.
        case alert
        /// A silent update, a badge after the user read elsewhere: `content-available` and priority 5.
        case background
    }

    /// The device's token, hex as the app gets it.
    package var deviceToken: String
    /// The app's bundle id.
    package var topic: String
    package var pushType: PushType
    /// The same on every try of one push: APNs echoes it, and a device shows a push once.
    package var id: UUID
    /// Pushes with the same collapse id replace each other on the device (`likes:<post>`); at most 64 bytes.
    package var collapseID: String?
    /// After this APNs stops trying to reach the device; the push is not sent again after it either.
    package var expiration: Date
    package var payload: [UInt8]

    package init(
        deviceToken: String, topic: String, pushType: PushType, id: UUID, collapseID: String? = nil,
        expiration: Date, payload: [UInt8]
    ) {
        (self.deviceToken, self.topic, self.pushType, self.id) = (deviceToken, topic, pushType, id)
        (self.collapseID, self.expiration, self.payload) = (collapseID, expiration, payload)
    }

    /// The HTTP/2 request to the APNs host at `base` (`https://api.push.apple.com`, or the sandbox), authenticated by
    /// the provider token `bearer` (``APNsProviderToken``).
    package func httpRequest(base: String, bearer: String) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: base + "/3/device/" + deviceToken)
        request.method = .POST
        request.headers.add(name: "authorization", value: "bearer " + bearer)
        request.headers.add(name: "apns-topic", value: topic)
        request.headers.add(name: "apns-push-type", value: pushType.rawValue)
        request.headers.add(name: "apns-priority", value: pushType == .alert ? "10" : "5")
        request.headers.add(name: "apns-expiration", value: String(Int64(expiration.timeIntervalSince1970)))
        request.headers.add(name: "apns-id", value: id.uuidString.lowercased())
        if let collapseID { request.headers.add(name: "apns-collapse-id", value: collapseID) }
        request.headers.add(name: "content-type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: payload))
        return request
    }
}

/// What an answer of APNs asks of the sender, from its status and its `{"reason", "timestamp"}` body.
extension PushOutcome {
    /// The outcome of an APNs answer with `status`, `body` and `retryAfter` (the header's value) to a push for a device
    /// registered at `registeredAt`.
    package init(apnsStatus status: Int, body: [UInt8], retryAfter: String?, deviceRegisteredAt: Date) {
        guard status != 200 else {
            self = .delivered
            return
        }
        let answer = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]
        let reason = answer?["reason"] as? String ?? "HTTP \(status)"
        switch (status, reason) {
        case (410, _):
            // Apple's timestamp is when it last found the token invalid, in milliseconds: the device registered it
            // again since (the app was reinstalled), so the device stays; this push goes.
            let stoppedAt = (answer?["timestamp"] as? NSNumber).map {
                Date(timeIntervalSince1970: $0.doubleValue / 1000)
            }
            if let stoppedAt, stoppedAt < deviceRegisteredAt {
                self = .drop(reason: reason)
            } else {
                self = .forgetDevice(reason: reason)
            }
        case (400, "BadDeviceToken"), (400, "DeviceTokenNotForTopic"): self = .forgetDevice(reason: reason)
        case (403, "ExpiredProviderToken"): self = .renewCredentials
        case (403, _), (429, _), (500...599, _): self = .retry(after: Self.seconds(retryAfter), reason: reason)
        case (400, "TopicDisallowed"), (400, "BadTopic"), (400, "MissingTopic"):
            self = .retry(after: nil, reason: reason)
        default: self = .drop(reason: reason)
        }
    }
}
