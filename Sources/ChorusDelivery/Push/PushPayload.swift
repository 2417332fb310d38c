import Foundation

/// What one push says, whichever service carries it: the alert's text, the badge, and the ids the app opens the right
/// screen with. ``apns()`` and ``fcm(token:)`` lay it out as each service takes it.
package struct PushPayload: Sendable, Equatable {
    package enum Kind: String, Sendable {
        case like, comment, follow, repost, mention
        case followRequest = "follow_request"
        case followAccepted = "follow_accepted"
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
        case .followAccepted: "\(actorName) accepted your follow request"
        case .message: "\(actorName): " + String((messageText ?? "").prefix(Self.quotedCharacters))
        case .badge: nil
        }
    }

    /// Pushes that replace each other on the device: every like of one post.
    package var collapseID: String? {
        kind == .like ? postID.map { "likes:\($0)" } : nil
    }

    /// The APNs payload: `aps` with the alert, badge, sound, thread and `mutable-content`; or, for a badge update,
    /// `content-available` and the badge alone.
    package func apns() -> [UInt8] {
        let alerting = body != nil
        let aps = APNsBody.APS(
            alert: body.map { .init(body: $0) }, badge: badge, sound: alerting ? "default" : nil,
            threadID: alerting ? (kind == .message ? "messages:\(userID ?? "")" : "notifications") : nil,
            mutableContent: alerting ? 1 : nil, contentAvailable: alerting ? nil : 1)
        return Self.json(APNsBody(aps: aps, chorus: fields(position: position)))
    }

    /// The body of FCM's `messages:send` for the device `token`: the notification (none for a badge update), the data
    /// (strings only, as FCM takes), and Android's collapse key.
    package func fcm(token: String) -> [UInt8] {
        let message = FCMBody.Message(
            token: token, data: fields(position: String(position), badge: String(badge)),
            notification: body.map { .init(body: $0) }, android: collapseID.map { .init(collapseKey: $0) })
        return Self.json(FCMBody(message: message))
    }

    /// The app's part: what happened, where in the log, and the ids its screen opens with.
    private func fields<Position: Encodable>(position: Position, badge: String? = nil) -> AppFields<Position> {
        AppFields(
            type: kind.rawValue, position: position, badge: badge, notificationId: notificationID,
            messageId: messageID, postId: postID, userId: userID)
    }

    /// Codable rather than `JSONSerialization`, whose dictionaries of `Any` cost more than the rest of a send.
    private static func json(_ body: some Encodable) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        // Strings and numbers only: encoding cannot fail.
        return Array((try? encoder.encode(body)) ?? Data())
    }
}

private struct Text: Encodable {
    var body: String
}

private struct AppFields<Position: Encodable>: Encodable {
    var type: String
    var position: Position
    var badge: String?
    var notificationId: String?
    var messageId: String?
    var postId: String?
    var userId: String?
}

private struct APNsBody: Encodable {
    struct APS: Encodable {
        var alert: Text?
        var badge: Int
        var sound: String?
        var threadID: String?
        var mutableContent: Int?
        var contentAvailable: Int?

        enum CodingKeys: String, CodingKey {
            case alert, badge, sound
            case threadID = "thread-id"
            case mutableContent = "mutable-content"
            case contentAvailable = "content-available"
        }
    }

    var aps: APS
    var chorus: AppFields<UInt64>
}

private struct FCMBody: Encodable {
    struct Message: Encodable {
        struct Android: Encodable {
            var collapseKey: String
            enum CodingKeys: String, CodingKey { case collapseKey = "collapse_key" }
        }

        var token: String
        var data: AppFields<String>
        var notification: Text?
        var android: Android?
    }

    var message: Message
}
