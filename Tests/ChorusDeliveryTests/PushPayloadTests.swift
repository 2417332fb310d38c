import ChorusDelivery
import Foundation
import Testing

@Suite("Push: what a push says, to APNs and to FCM")
struct PushPayloadTests {
    private static func object(_ bytes: [UInt8]) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    @Test("a like: the alert, the badge, the thread, mutable-content, the app's ids and position, collapsed per post")
    func like() throws {
        let like = PushPayload(
            kind: .like, actorName: "Bo", notificationID: "N1", postID: "P1", userID: "U2", position: 42, badge: 3)
        #expect(like.collapseID == "likes:P1")
        let payload = try Self.object(like.apns())
        let aps = try #require(payload["aps"] as? [String: Any])
        #expect((aps["alert"] as? [String: Any])?["body"] as? String == "Bo liked your post")
        #expect(aps["badge"] as? Int == 3 && aps["sound"] as? String == "default")
        #expect(aps["thread-id"] as? String == "notifications" && aps["mutable-content"] as? Int == 1)
        #expect(aps["content-available"] == nil)
        let chorus = try #require(payload["chorus"] as? [String: Any])
        #expect(chorus["type"] as? String == "like" && chorus["position"] as? Int == 42)
        #expect(chorus["notificationId"] as? String == "N1" && chorus["postId"] as? String == "P1")
        #expect(chorus["userId"] as? String == "U2" && chorus["messageId"] == nil)

        let fcm = try #require(try Self.object(like.fcm(token: "fcm-token"))["message"] as? [String: Any])
        #expect(fcm["token"] as? String == "fcm-token")
        #expect((fcm["notification"] as? [String: Any])?["body"] as? String == "Bo liked your post")
        #expect((fcm["android"] as? [String: Any])?["collapse_key"] as? String == "likes:P1")
        let data = try #require(fcm["data"] as? [String: Any])
        #expect(data.values.allSatisfy { $0 is String }, "FCM's data takes strings only: \(data)")
        #expect(
            data["type"] as? String == "like" && data["position"] as? String == "42" && data["badge"] as? String == "3")
    }

    @Test("a message quotes its first 120 characters, Hangul and emoji counted as characters, in its sender's thread")
    func message() throws {
        let text = String(repeating: "안녕👋🏽", count: 100)
        let message = PushPayload(
            kind: .message, actorName: "보라", messageText: text, messageID: "M1", userID: "U2", position: 7, badge: 1)
        let quoted = try #require(message.body?.dropFirst("보라: ".count))
        #expect(quoted.count == 120 && quoted.hasSuffix("녕👋🏽") && text.hasPrefix(quoted))
        #expect(quoted.unicodeScalars.count == 160, "an emoji with its skin tone is one character of two scalars")
        #expect(message.collapseID == nil)
        let aps = try #require(try Self.object(message.apns())["aps"] as? [String: Any])
        #expect(aps["thread-id"] as? String == "messages:U2")
        #expect((aps["alert"] as? [String: Any])?["body"] as? String == message.body)
    }

    @Test("a badge update is silent: content-available and the badge, no alert or sound; no notification on FCM")
    func badge() throws {
        let badge = PushPayload(kind: .badge, actorName: "", position: 9, badge: 0)
        let aps = try #require(try Self.object(badge.apns())["aps"] as? [String: Any])
        #expect(aps["content-available"] as? Int == 1 && aps["badge"] as? Int == 0)
        #expect(aps["alert"] == nil && aps["sound"] == nil)
        let fcm = try #require(try Self.object(badge.fcm(token: "t"))["message"] as? [String: Any])
        #expect(fcm["notification"] == nil)
        #expect((fcm["data"] as? [String: Any])?["type"] as? String == "badge")
    }

    @Test("each kind of notification says what happened")
    func bodies() {
        let said = [PushPayload.Kind.comment, .follow, .repost, .mention, .followRequest].map {
            PushPayload(kind: $0, actorName: "Bo", position: 1, badge: 1).body
        }
        #expect(
            said == [
                "Bo commented on your post", "Bo followed you", "Bo reposted your post", "Bo mentioned you",
                "Bo asked to follow you",
            ])
    }
}
