import ChorusDomain
import ChorusLog
import Crypto
import Foundation

/// One push to one device, as the push outbox keeps it until APNs or FCM took it (or refused it for good).
package struct Push: PersonalOutboxItem {
    /// `apns-id`: a UUID, the same on every attempt.
    package let id: String
    package let user: UserID
    package let device: DeviceID
    package let platform: PushPlatform
    package let environment: PushEnvironment
    package let token: String
    /// When the device last registered the token, in milliseconds since 1970: an APNs 410 from before it is about an
    /// older install.
    package let registeredAt: Int64
    /// Milliseconds since 1970 after which it is not worth sending (`apns-expiration`).
    package let expiresAt: Int64
    package let payload: PushPayload

    /// How long a push is worth delivering, from what it tells.
    package static let lifetime: Int64 = 24 * 3600 * 1000

    /// The id of the push that the event at `position` makes for `device` (at most one): the same whichever node or
    /// outbox makes it, and however often, so that APNs and the app see one push.
    package static func id(position: LogPosition, device: DeviceID) -> String {
        var bytes = Array(SHA256.hash(data: Array("\(position.rawValue)/\(device.rawValue)".utf8)).prefix(16))
        // An RFC 9562 UUID of version 8 (made by the application).
        bytes[6] = bytes[6] & 0x0F | 0x80
        bytes[8] = bytes[8] & 0x3F | 0x80
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9],
                bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            )
        ).uuidString
    }

    package init(
        id: String = UUID().uuidString, user: UserID, device: DeviceID, platform: PushPlatform,
        environment: PushEnvironment, token: String, registeredAt: Int64, expiresAt: Int64, payload: PushPayload
    ) {
        (self.id, self.user, self.device, self.platform) = (id, user, device, platform)
        (self.environment, self.token, self.registeredAt) = (environment, token, registeredAt)
        (self.expiresAt, self.payload) = (expiresAt, payload)
    }

    /// Pushes to one of `users`, or telling what one of them did (their name, a message's text).
    package func concerns(_ users: Set<UserID>) -> Bool {
        users.contains(user) || payload.userID.map { users.contains(UserID(unchecked: $0)) } ?? false
    }

    /// One queue per device, under its user: a device's pushes go in log order.
    package var queue: String { "\(user.rawValue)/\(device.rawValue)" }

    package func encode(to writer: inout PayloadWriter) {
        writer.write(id)
        writer.write(user)
        writer.write(device)
        writer.write(platform.rawValue)
        writer.write(environment.rawValue)
        writer.write(token)
        writer.write(registeredAt)
        writer.write(expiresAt)
        writer.write(payload.kind.rawValue)
        writer.write(payload.actorName)
        writer.write(payload.messageText)
        writer.write(payload.notificationID)
        writer.write(payload.messageID)
        writer.write(payload.postID)
        writer.write(payload.userID)
        writer.write(payload.position)
        writer.write(Int64(payload.badge))
    }

    package init(from reader: inout PayloadReader) throws {
        let id = try reader.readString()
        let user = try reader.read(UserID.self)
        let device = try reader.read(DeviceID.self)
        guard let platform = PushPlatform(rawValue: try reader.readString()),
            let environment = PushEnvironment(rawValue: try reader.readString())
        else { throw PayloadError.badFlag(0) }
        let token = try reader.readString()
        let registeredAt = try reader.readInt64()
        let expiresAt = try reader.readInt64()
        guard let kind = PushPayload.Kind(rawValue: try reader.readString()) else { throw PayloadError.badFlag(0) }
        let payload = PushPayload(
            kind: kind, actorName: try reader.readString(), messageText: try reader.readOptionalString(),
            notificationID: try reader.readOptionalString(), messageID: try reader.readOptionalString(),
            postID: try reader.readOptionalString(), userID: try reader.readOptionalString(),
            position: try reader.readUInt64(), badge: Int(try reader.readInt64()))
        self.init(
            id: id, user: user, device: device, platform: platform, environment: environment, token: token,
            registeredAt: registeredAt, expiresAt: expiresAt, payload: payload)
    }
}
