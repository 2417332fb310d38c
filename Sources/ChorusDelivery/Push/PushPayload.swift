import Foundation

/// What one push says, whichever service carries it: the alert's text, the badge, and the ids the app opens the right
/// screen with. ``apns()`` and ``fcm(token:)`` lay it out as each service takes it.
package struct PushPayload: Sendable, Equatable {
    package enum Kind: String, Sendable {
        case like, comment, follow, repost, mention
        case followRequest = "follow_request"
        case message
        /// A silent update of the badge after the user read elsewhere.
        case badge
    }

    /// The longest part of a message an alert shows, in characters.
    package static let quotedCharacters = 120

    package var kind: Kind
    /// The name of who did it: "Bo".
    package var actorName: String
    /// A message's text, quoted in its alert.
    package var messageText: String?
    package var notificationID: String?
    package var messageID: String?
    package var postID: String?
    /// The actor's id.
    package var userID: String?
    /// The log position of what is pushed: the app reads with `Chorus-Min-Position` and sees it.
    package var position: UInt64
    /// The recipient's unread notifications and conversations.
    package var badge: Int

    package init(
        kind: Kind, actorName: String, messageText: String? = nil, notificationID: String? = nil,
        messageID: String? = nil, postID: String? = nil, userID: String? = nil, position: UInt64, badge: Int
    ) {
        (self.kind, self.actorName, self.messageText) = (kind, actorName, messageText)
        (self.notificationID, self.messageID, self.postID, self.userID) = (notificationID, messageID, postID, userID)
        (self.position, self.badge) = (position, badge)
    }

    /// The alert's text: "Bo liked your post", "Bo: <the message's first 120 characters>"; nil for a badge update.
    package var body: String? {
        switch kind {
        case .like: "\(actorName) liked your post"
        case .comment: "\(actorName) commented on your post"
        case .follow: "\(actorName) followed you"
        case .repost: "\(actorName) reposted your post"
        case .mention: "\(actorName) mentioned you"
        case .followRequest: "\(actorName) asked to follow you"
        case .message: "\(actorName): " + String((messageText ?? "").prefix(Self.quotedCharacters))
        case .badge: nil
        }
    }

    /// Pushes that replace each other on the device: every like of one post.
    package var collapseID: String? {
        kind == .like ? postID.map { "likes:\($0)" } : nil
    }

    /// The app's part, as strings (FCM's data takes nothing else).
    private var chorusFields: [String: String] {
        var fields = ["type": kind.rawValue, "position": String(position)]
        fields["notificationId"] = notificationID
        fields["messageId"] = messageID
        fields["postId"] = postID
        fields["userId"] = userID
        return fields
    }

    /// The APNs payload: `aps` with the alert, badge, sound, thread and `mutable-content`; or, for a badge update,
    /// `content-available` and the badge alone.
    package func apns() -> [UInt8] {
        var aps: [String: Any] = ["badge": badge]
        if let body {
            aps["alert"] = ["body": body]
            aps["sound"] = "default"
            aps["thread-id"] = kind == .message ? "messages:\(userID ?? "")" : "notifications"
            aps["mutable-content"] = 1
        } else {
            aps["content-available"] = 1
        }
        var chorus: [String: Any] = chorusFields
        chorus["position"] = position
        return Self.json(["aps": aps, "chorus": chorus])
    }

    /// The body of FCM's `messages:send` for the device `token`: the notification (none for a badge update), the data,
    /// and Android's collapse key.
    package func fcm(token: String) -> [UInt8] {
        var message: [String: Any] = ["token": token, "data": chorusFields.merging(["badge": String(badge)]) { $1 }]
        if let body { message["notification"] = ["body": body] }
        if let collapseID { message["android"] = ["collapse_key": collapseID] }
        return Self.json(["message": message])
    }

    private static func json(_ object: [String: Any]) -> [UInt8] {
        // Only strings, numbers and objects of them: serialization cannot fail.
        Array(
            (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]))
                ?? Data())
    }
}
