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
/// - `posts`: post id → ``PostState``: author, flags, position of the post, the post it reposts
/// - `reposts`: original, plain repost → empty (a repost with no text, caption or image, which goes with its original)
/// - `comments`: comment id → ``CommentState``: post, author, position of the comment, whether it was deleted
/// - `follows`: follower, followee → position of the follow (u64 big-endian)
/// - `likes`: user, post → position of the like (likewise)
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
/// - `erasures`, `completed-erasures`: see ``erasure(of:in:)-(UserID,_)``
/// - `format`: `version` → the format of the tables above (u32 little-endian, ``DecisionStateUpgrade``)
public struct DecisionState: Sendable {
    let emails = StateTable("emails")
    let users = StateTable("users")
    let posts = StateTable("posts")
    let reposts = StateTable("reposts")
    let comments = StateTable("comments")
    let follows = StateTable("follows")
    let likes = StateTable("likes")
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

    /// The state tables the event log must be opened with (`LMDBEventLog.Configuration.stateTables`, for one).
    public static let tableNames = DecisionState().allTables.map(\.name)

    public init() {}

    private var allTables: [StateTable] {
        [
            emails, users, posts, reposts, comments, follows, likes, shares, rooms, roomMembers, notificationReads,
            conversationReads, conversationHeads, idempotency, sessions, userSessions, resets, blocks, mutes, reports,
            resolvedReports, reportSubjects, suspended, erasures, completedErasures,
            format,
        ]
    }

    /// The tables whose every entry follows from the events alone (all but `idempotency`, which records requests, and
    /// `format`).
    var derivedTables: [StateTable] {
        [
            emails, users, posts, reposts, comments, follows, likes, shares, rooms, roomMembers, notificationReads,
            conversationReads, conversationHeads, sessions, userSessions, resets, blocks, mutes, reports,
            resolvedReports, reportSubjects, suspended, erasures, completedErasures,
        ]
    }

    static func key(_ part: String) -> [UInt8] { Array(part.utf8) }

    /// Two parts, NUL between them.
    static func key(_ first: String, _ second: String) -> [UInt8] { [UInt8](first, nulThen: second) }

    func exists(_ user: UserID, in state: some StateReader) throws -> Bool {
        try state.withValue(for: Self.key(user.rawValue), in: users) { $0 != nil }
    }

    /// The post as the state keeps it, deleted or not; nil if there never was one.
    func post(_ post: PostID, in state: some StateReader) throws -> PostState? {
        try state.withValue(for: Self.key(post.rawValue), in: posts) { try $0.map(PostState.init(decoding:)) }
    }

    /// The author of `post`, nil if there is no such post or it was deleted.
    func author(of post: PostID, in state: some StateReader) throws -> UserID? {
        guard let found = try self.post(post, in: state), !found.deleted else { return nil }
        return found.author
    }

    /// The plain reposts of `post` that stand, in key order.
    func plainReposts(of post: PostID, in state: some StateReader) throws -> [PostID] {
        let prefix = Self.key(post.rawValue) + [0]
        var found: [PostID] = []
        try state.forEach(in: reposts, prefix: prefix) { key, _ in
            found.append(PostID(unchecked: String(decoding: key[prefix.count...], as: UTF8.self)))
            return true
        }
        return found
    }

    /// The post a repost of `post` reposts: `post` itself, or the original of a plain repost (``isPlainRepost(_:)``),
    /// which shows nothing of its own. Throws if `post` never was, or was deleted.
    func repostTarget(of post: PostID, in state: some StateReader) throws -> (post: PostID, author: UserID) {
        guard let found = try self.post(post, in: state) else { throw DomainError(.unknownPost, "no post \(post)") }
        guard !found.deleted else { throw DomainError(.gone, "post \(post) was deleted") }
        guard let original = found.repostOf,
            try state.withValue(for: Self.key(original.rawValue, post.rawValue), in: reposts, { $0 != nil })
        else { return (post, found.author) }
        // A plain repost goes with its original: while it stands, so does the original.
        guard let author = try author(of: original, in: state) else {
            throw DomainError(.gone, "post \(original) was deleted")
        }
        return (original, author)
    }

    /// Whether `user` reposted `post` plainly (``Reposted``), and since which position.
    func share(_ user: UserID, _ post: PostID, in state: some StateReader) throws -> Edge {
        try state.withValue(for: Self.key(post.rawValue, user.rawValue), in: shares, Edge.init)
    }

    /// The ``Unreposted`` of every plain repost of `post` (by `author`) that stands, in key order.
    func unreposts(of post: PostID, by author: UserID, in state: some StateReader) throws -> [DomainEvent] {
        let prefix = Self.key(post.rawValue) + [0]
        var found: [DomainEvent] = []
        try state.forEach(in: shares, prefix: prefix) { key, value in
            let user = UserID(unchecked: String(decoding: key[prefix.count...], as: UTF8.self))
            guard let since = Edge(value).since else { return true }
            found.append(.unreposted(Unreposted(user: user, post: post, postAuthor: author, repostedAt: since)))
            return true
        }
        return found
    }

    /// What deleting `post` (which stands, as `found`) appends: the ``Unreposted`` of its plain reposts by toggle
    /// (so that they leave the feeds while the post is still there to find), its PostDeleted, then one for each plain
    /// repost post of it, which shows nothing of its own and goes with it.
    func deletions(of post: PostID, _ found: PostState, in state: some StateReader) throws -> [DomainEvent] {
        var deletions = try unreposts(of: post, by: found.author, in: state)
        deletions.append(
            .postDeleted(
                PostDeleted(post: post, author: found.author, postedAt: found.postedAt, repostOf: found.repostOf)))
        for repost in try plainReposts(of: post, in: state) {
            guard let plain = try self.post(repost, in: state), !plain.deleted else { continue }
            deletions.append(
                .postDeleted(PostDeleted(post: repost, author: plain.author, postedAt: plain.postedAt, repostOf: post)))
        }
        return deletions
    }

    /// A repost with nothing of its own: it shows as its original, and goes with it.
    static func isPlainRepost(_ event: PostCreated) -> Bool {
        event.repostOf != nil && event.text.isEmpty && event.caption.isEmpty && event.image == nil
    }

    /// The comment as the state keeps it, deleted or not; nil if there never was one.
    func comment(_ comment: CommentID, in state: some StateReader) throws -> CommentState? {
        try state.withValue(for: Self.key(comment.rawValue), in: comments) { try $0.map(CommentState.init(decoding:)) }
    }

    /// The user registered with the e-mail of `emailKey`, unless they deleted their account.
    func user(withEmailKey emailKey: String, in state: some StateReader) throws -> UserID? {
        guard
            let user = try state.value(for: Self.key(emailKey), in: emails).map({
                UserID(unchecked: String(decoding: $0, as: UTF8.self))
            }), try exists(user, in: state)
        else { return nil }
        return user
    }

    func passwordHash(of user: UserID, in state: some StateReader) throws -> String? {
        try state.value(for: Self.key(user.rawValue), in: users).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Whether `follower` follows `followee`, and since which position (nil if recorded without it).
    func follow(_ follower: UserID, _ followee: UserID, in state: some StateReader) throws -> Edge {
        try state.withValue(for: Self.key(follower.rawValue, followee.rawValue), in: follows, Edge.init)
    }

    /// Whether `user` likes `post`, and since which position (nil if recorded without it).
    func like(_ user: UserID, _ post: PostID, in state: some StateReader) throws -> Edge {
        try state.withValue(for: Self.key(user.rawValue, post.rawValue), in: likes, Edge.init)
    }

    func roomExists(_ room: RoomID, in state: some StateReader) throws -> Bool {
        try state.withValue(for: Self.key(room.rawValue), in: rooms) { $0 != nil }
    }

    /// Whether `user` is a member of `room`, and since which position.
    func membership(of user: UserID, in room: RoomID, state: some StateReader) throws -> Edge {
        try state.withValue(for: Self.key(room.rawValue, user.rawValue), in: roomMembers, Edge.init)
    }

    /// The position `user`'s notifications are read up to.
    func notificationsRead(by user: UserID, in state: some StateReader) throws -> LogPosition? {
        try state.withValue(for: Self.key(user.rawValue), in: notificationReads, Edge.init).since
    }

    /// Whether `reader` has read their conversation with `partner` since its last message.
    func hasReadConversation(_ reader: UserID, with partner: UserID, in state: some StateReader) throws -> Bool {
        let read = try state.withValue(
            for: Self.key(reader.rawValue, partner.rawValue), in: conversationReads, Edge.init
        ).since
        let head = try state.withValue(for: Self.pairKey(reader, partner), in: conversationHeads, Edge.init).since
        guard let head else { return true }
        return read.map { $0 > head } ?? false
    }

    /// The key of a conversation: its two users, the smaller id first.
    static func pairKey(_ one: UserID, _ other: UserID) -> [UInt8] {
        let (first, second) = pair(one, other)
        return key(first.rawValue, second.rawValue)
    }

    /// The two users of a conversation in the order its key holds them.
    static func pair(_ one: UserID, _ other: UserID) -> (UserID, UserID) { (min(one, other), max(one, other)) }

    /// Whether `user` blocked `other`, and since which position.
    func block(_ user: UserID, _ other: UserID, in state: some StateReader) throws -> Edge {
        try state.withValue(for: Self.key(user.rawValue, other.rawValue), in: blocks, Edge.init)
    }

    /// Whether either of the two users blocked the other.
    func eitherBlocked(_ one: UserID, _ other: UserID, in state: some StateReader) throws -> Bool {
        try block(one, other, in: state).exists || block(other, one, in: state).exists
    }

    /// Whether `user` muted `other`, and since which position.
    func mute(_ user: UserID, _ other: UserID, in state: some StateReader) throws -> Edge {
        try state.withValue(for: Self.key(user.rawValue, other.rawValue), in: mutes, Edge.init)
    }

    /// The report while it is open; nil once resolved, or if there is no such report.
    func openReport(_ report: ReportID, in state: some StateReader) throws -> OpenReport? {
        try state.withValue(for: Self.key(report.rawValue), in: reports) { try $0.map(OpenReport.init(decoding:)) }
    }

    func isResolved(_ report: ReportID, in state: some StateReader) throws -> Bool {
        try state.withValue(for: Self.key(report.rawValue), in: resolvedReports) { $0 != nil }
    }

    /// `reporter`'s report of `target` while it is open; nil when they have none open.
    func openReport(by reporter: UserID, of target: ReportTarget, in state: some StateReader) throws -> ReportID? {
        let key = Self.key(reporter.rawValue, Self.reportSubjectKey(target))
        guard
            let latest = try state.value(for: key, in: reportSubjects).map({
                ReportID(unchecked: String(decoding: $0, as: UTF8.self))
            }), try openReport(latest, in: state) != nil
        else { return nil }
        return latest
    }

    /// What a report is about, as a key: `post <id>`, `comment <id>` or `user <id>`.
    static func reportSubjectKey(_ target: ReportTarget) -> String {
        switch target {
        case .post(let post): "post \(post)"
        case .comment(_, let comment): "comment \(comment)"
        case .user(let user): "user \(user)"
        }
    }

    func isSuspended(_ user: UserID, in state: some StateReader) throws -> Bool {
        try state.withValue(for: Self.key(user.rawValue), in: suspended) { $0 != nil }
    }

    /// The session's user and expiry, unless it ended.
    func session(_ session: SessionID, in state: some StateReader) throws -> (user: UserID, expiresAt: EventTime)? {
        try state.withValue(for: Self.key(session.rawValue), in: sessions) { stored in
            guard let stored, stored.count > 9, let separator = stored.firstIndex(of: 0), stored.count - separator == 9
            else { return nil }
            let user = UserID(unchecked: String(decoding: stored[..<separator], as: UTF8.self))
            let milliseconds = Int64(bigEndian: stored.loadUnaligned(fromByteOffset: separator + 1, as: Int64.self))
            return (user, EventTime(millisecondsSince1970: milliseconds))
        }
    }

    /// The ids under `user` in a table keyed by user, id (`user-sessions`, `resets`), in key order.
    private func ids(of user: UserID, in table: StateTable, state: some StateReader) throws -> [String] {
        let prefix = Self.key(user.rawValue) + [0]
        var found: [String] = []
        try state.forEach(in: table, prefix: prefix) { key, _ in
            found.append(String(decoding: key[prefix.count...], as: UTF8.self))
            return true
        }
        return found
    }

    /// The sessions of `user` that have not ended (some may have expired).
    func sessions(of user: UserID, in state: some StateReader) throws -> [SessionID] {
        try ids(of: user, in: userSessions, state: state).map(SessionID.init(unchecked:))
    }

    /// The resets of `user` that no password change has revoked (some may have expired).
    func resets(of user: UserID, in state: some StateReader) throws -> [ResetID] {
        try ids(of: user, in: resets, state: state).map(ResetID.init(unchecked:))
    }

    /// When `user`'s `reset` expires; nil if there is no such reset, or a password change revoked it.
    func reset(_ reset: ResetID, of user: UserID, in state: some StateReader) throws -> EventTime? {
        try state.withValue(for: Self.key(user.rawValue, reset.rawValue), in: resets) { value in
            guard let value, value.count == 8 else { return nil }
            return EventTime(millisecondsSince1970: Int64(bigEndian: value.loadUnaligned(as: Int64.self)))
        }
    }

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
