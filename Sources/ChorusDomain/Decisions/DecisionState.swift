import ChorusLog

/// The small state commands are decided against, kept in the event log's own environment and changed in the same
/// transaction as the events it decides: so a refused command appends nothing, two racing commands cannot both pass,
/// and repeats change nothing. Every value here follows from the events; `chorus log verify` can recompute it, and a
/// log whose state an older Chorus wrote gets it recomputed in this one's format (``DecisionStateUpgrade``).
///
/// Tables (keys UTF-8, parts joined by NUL, which ids and idempotency keys never contain; values in
/// ``PayloadWriter``'s form unless said otherwise):
/// - `emails`: e-mail key (``Validate/emailKey(_:)``, never the e-mail) → user id (UTF-8), until the account is deleted
/// - `users`: user id → bcrypt hash (UTF-8), until the account is deleted
/// - `handles`: handle key (``Handles/key(_:)``, never the handle) → the user id that took it last (UTF-8), until
///   the account is deleted; the handle is theirs while `user-handles` says so
/// - `user-handles`: user id → the key of their handle now (UTF-8), until the account is deleted
/// - `posts`: post id → ``PostState``: author, flags, position of the post, the post it reposts, its images
/// - `attached-media`: media id → empty, once a post or a profile shows the image (unattached uploads are removed)
/// - `reposts`: original, plain repost → empty (a repost with no text, caption or image, which goes with its original)
/// - `comments`: comment id → ``CommentState``: post, author, position of the comment, whether it was deleted
/// - `follows`: follower, followee → position of the follow (u64 big-endian)
/// - `follow-requests`: followee, follower → position of the pending ``FollowRequested`` (likewise)
/// - `private-accounts`: user → position of the ``ProfileEdited`` that made the account private (likewise), while it is
/// - `likes`: user, post → position of the like (likewise)
/// - `bookmarks`: user, post → position of the bookmark (likewise)
/// - `reply-rules`: post → who may comment on it (``ReplyPolicy/code``, one byte), unless everyone may
/// - `muted-words`: user, muted word → position of its ``WordMuted`` (u64 big-endian), until it is unmuted
/// - `post-mentions`: post, `caption` or `text` → whom it mentions (``PayloadWriter/write(mentions:)``), unless no one
/// - `shares`: post, user → position of the user's plain repost of it (``Reposted``; likewise)
/// - `rooms`: room → its creator's id (UTF-8)
/// - `room-members`: room, user → position of the user's ``RoomJoined`` (u64 big-endian)
/// - `notification-reads`: user → the position their notifications are read up to (u64 big-endian)
/// - `conversation-reads`: reader, partner → the position of the reader's last ``ConversationRead`` (likewise)
/// - `conversation-heads`: the two users of a conversation (smaller id first) → the position of its last message
///   (likewise)
/// - `idempotency`: caller (``PreparedCommand/caller``), key → request fingerprint (u64) and the encoded
///   ``CommandResult``
/// - `sessions`: session id → user id, NUL, expiry (ms since 1970, i64 big-endian); ended sessions are removed
/// - `user-sessions`: user, session → empty, for each session in `sessions`
/// - `resets`: user, reset → expiry (ms since 1970, i64 big-endian), until a password change revokes it
/// - `blocks`: blocker, blocked → position of the block (u64 big-endian)
/// - `mutes`: muter, muted → position of the mute (likewise)
/// - `reports`: report id → ``OpenReport``, until it is resolved
/// - `resolved-reports`: report id → empty
/// - `report-subjects`: reporter, what they reported (``reportSubjectKey(_:)``) → the id of their latest report of it
///   (UTF-8): while that report is open, another of the same is that report
/// - `suspended`: user → empty, while suspended
/// - `device-tokens`: token key (``DeviceRegistered/tokenKey(platform:token:)``) → user id, NUL, device id (UTF-8),
///   while a device is registered with the token
/// - `devices`: user, device → the device's token key (UTF-8), until the device is forgotten
/// - `erasures`, `completed-erasures`: see ``erasure(of:in:)-(UserID,_)``
/// - `format`: `version` → the format of the tables above (u32 little-endian, ``DecisionStateUpgrade``)
public struct DecisionState: Sendable {
    let emails = StateTable("emails")
    let users = StateTable("users")
    let posts = StateTable("posts")
    let attachedMedia = StateTable("attached-media")
    let reposts = StateTable("reposts")
    let comments = StateTable("comments")
    let follows = StateTable("follows")
    let followRequests = StateTable("follow-requests")
    let privateAccounts = StateTable("private-accounts")
    let likes = StateTable("likes")
    let bookmarks = StateTable("bookmarks")
    let handles = StateTable("handles")
    let userHandles = StateTable("user-handles")
    let replyRules = StateTable("reply-rules")
    let postMentions = StateTable("post-mentions")
    let mutedWords = StateTable("muted-words")
    let shares = StateTable("shares")
    let rooms = StateTable("rooms")
    let roomMembers = StateTable("room-members")
    let notificationReads = StateTable("notification-reads")
    let conversationReads = StateTable("conversation-reads")
    let conversationHeads = StateTable("conversation-heads")
    let idempotency = StateTable("idempotency")
    let sessions = StateTable("sessions")
    let userSessions = StateTable("user-sessions")
    let resets = StateTable("resets")
    let blocks = StateTable("blocks")
    let mutes = StateTable("mutes")
    let reports = StateTable("reports")
    let resolvedReports = StateTable("resolved-reports")
    let reportSubjects = StateTable("report-subjects")
    let suspended = StateTable("suspended")
    let erasures = StateTable("erasures")
    let completedErasures = StateTable("completed-erasures")
    let format = StateTable("format")
    let deviceTokens = StateTable("device-tokens")
    let devices = StateTable("devices")

    /// The state tables the event log must be opened with (`LMDBEventLog.Configuration.stateTables`, for one).
    public static let tableNames = DecisionState().allTables.map(\.name)

    public init() {}

    private var allTables: [StateTable] {
        [
            emails, users, posts, reposts, comments, follows, likes, shares, rooms, roomMembers, notificationReads,
            conversationReads, conversationHeads, idempotency, sessions, userSessions, resets, blocks, mutes, reports,
            resolvedReports, reportSubjects, suspended, erasures, completedErasures,
            format, attachedMedia, deviceTokens, devices, bookmarks, replyRules, handles, userHandles, postMentions,
            mutedWords, followRequests, privateAccounts,
        ]
    }

    /// The tables whose every entry follows from the events alone (all but `idempotency`, which records requests, and
    /// `format`).
    var derivedTables: [StateTable] {
        [
            emails, users, posts, reposts, comments, follows, likes, shares, rooms, roomMembers, notificationReads,
            conversationReads, conversationHeads, sessions, userSessions, resets, blocks, mutes, reports,
            resolvedReports, reportSubjects, suspended, erasures, completedErasures, attachedMedia, deviceTokens,
            devices, bookmarks, replyRules, handles, userHandles, postMentions, mutedWords, followRequests,
            privateAccounts,
        ]
    }

    static func key(_ part: String) -> [UInt8] { Array(part.utf8) }

    /// Two parts, NUL between them.
    static func key(_ first: String, _ second: String) -> [UInt8] { [UInt8](first, nulThen: second) }

    /// The result first recorded for `key` by `caller`, with the fingerprint of the request that produced it.
    func idempotentResult(caller: String, key: String, in state: some StateReader) throws -> (
        fingerprint: UInt64, result: CommandResult
    )? {
        guard let stored = try state.value(for: Self.key(caller, key), in: idempotency) else { return nil }
        var reader = PayloadReader(stored)
        let fingerprint = UInt64(bitPattern: try reader.readInt64())
        let position = LogPosition(UInt64(bitPattern: try reader.readInt64()))
        let appended = try reader.readByte() == 1
        let created = try reader.readOptionalString()
        var session: SessionStarted?
        if try reader.readByte() == 1 {
            session = SessionStarted(
                session: try reader.read(SessionID.self), user: try reader.read(UserID.self),
                expiresAt: EventTime(millisecondsSince1970: try reader.readInt64()))
        }
        return (
            fingerprint, CommandResult(position: position, appended: appended, createdID: created, session: session)
        )
    }

    func recordIdempotentResult(
        _ result: CommandResult, fingerprint: UInt64, caller: String, key: String, in state: some StateWriter
    ) throws {
        var writer = PayloadWriter()
        writer.write(Int64(bitPattern: fingerprint))
        writer.write(Int64(bitPattern: result.position.rawValue))
        writer.write(UInt8(result.appended ? 1 : 0))
        writer.write(result.createdID)
        if let session = result.session {
            writer.write(UInt8(1))
            writer.write(session.session)
            writer.write(session.user)
            writer.write(session.expiresAt.millisecondsSince1970)
        } else {
            writer.write(UInt8(0))
        }
        try state.put(writer.bytes, for: Self.key(caller, key), in: idempotency)
    }
}
