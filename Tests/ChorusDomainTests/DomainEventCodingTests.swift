import ChorusDomain
import ChorusLog
import ChorusTestSupport
import Testing

@Suite("Domain event coding")
struct DomainEventCodingTests {
    static let user = UserID.make()
    static let other = UserID.make()
    static let post = PostID.make()
    static let room = RoomID.make()

    static let samples: [DomainEvent] = [
        .userRegistered(
            UserRegistered(
                user: user, email: "a@example.com", passwordHash: "$2b$04$x", name: "김민수", major: "", bio: "hi",
                handle: "minsu_kim")),
        .profileEdited(ProfileEdited(user: user, name: "N", major: nil, bio: "", profileImage: nil)),
        .profileEdited(ProfileEdited(user: user, name: nil, major: "M", bio: nil, profileImage: .remove)),
        .profileEdited(ProfileEdited(user: user, name: nil, major: nil, bio: nil, profileImage: .set(.make()))),
        .profileEdited(ProfileEdited(user: user, name: nil, major: nil, bio: nil, profileImage: nil, handle: "bo_2")),
        .profileEdited(ProfileEdited(user: user, name: nil, major: nil, bio: nil, profileImage: nil, isPrivate: true)),
        .profileEdited(ProfileEdited(user: user, name: "P", major: nil, bio: nil, profileImage: nil, isPrivate: false)),
        .postCreated(
            PostCreated(
                post: post, author: user, caption: "c", text: "t", media: [PostImage(id: .make(), alt: "a dog")],
                repostOf: nil)),
        .postCreated(PostCreated(post: .make(), author: other, caption: "", text: "", media: [], repostOf: post)),
        .postCreated(
            PostCreated(
                post: .make(), author: user, caption: "", text: "",
                media: [
                    PostImage(id: .make(), alt: nil), PostImage(id: .make(), alt: "두 번째"),
                    PostImage(id: .make(), alt: ""), PostImage(id: .make(), alt: "four"),
                ], repostOf: nil)),
        .postEdited(PostEdited(post: post, author: user, caption: "new caption", text: nil)),
        .postEdited(PostEdited(post: post, author: user, caption: nil, text: nil, alts: ["a cat", nil])),
        .postEdited(PostEdited(post: post, author: user, caption: nil, text: "")),
        .postEdited(PostEdited(post: post, author: user, caption: nil, text: nil, replies: .following)),
        .postEdited(PostEdited(post: post, author: user, caption: "c", text: nil, replies: .everyone)),
        .postEdited(
            PostEdited(
                post: post, author: user, caption: "@other", text: "none", captionMentions: [other], textMentions: [])),
        .postCreated(
            PostCreated(
                post: .make(), author: user, caption: "@user", text: "@other @user", media: [], repostOf: nil,
                replies: .mentioned, mentions: PostMentions(caption: [user], text: [other, user]))),
        .commentAdded(
            CommentAdded(
                comment: .make(), post: post, author: other, text: "@user", postAuthor: user, mentions: [user])),
        .postCreated(
            PostCreated(
                post: .make(), author: user, caption: "", text: "closed", media: [], repostOf: nil, replies: .nobody)),
        .wordMuted(WordMuted(user: user, id: .make(), word: "스포일러", expiresAt: nil, scope: .everyone)),
        .wordMuted(
            WordMuted(
                user: user, id: .make(), word: "the finale",
                expiresAt: EventTime(millisecondsSince1970: 1_800_000_000_000), scope: .notFollowing)),
        .wordUnmuted(WordUnmuted(user: user, id: .make(), mutedAt: LogPosition(7))),
        .liked(Liked(user: other, post: post, postAuthor: user)),
        .unliked(Unliked(user: other, post: post, postAuthor: user, likedAt: LogPosition(41))),
        .commentAdded(CommentAdded(comment: .make(), post: post, author: other, text: "nice 👍", postAuthor: user)),
        .liked(Liked(user: other, post: post, postAuthor: nil)),
        .followed(Followed(follower: other, followee: user)),
        .followed(Followed(follower: other, followee: user, requestedAt: LogPosition(12))),
        .followRequested(FollowRequested(follower: other, followee: user)),
        .followRequestEnded(
            FollowRequestEnded(follower: other, followee: user, requestedAt: LogPosition(12), reason: .declined)),
        .followRequestEnded(
            FollowRequestEnded(follower: user, followee: other, requestedAt: LogPosition(13), reason: .withdrawn)),
        .unfollowed(Unfollowed(follower: other, followee: user, followedAt: LogPosition(3))),
        .unfollowed(Unfollowed(follower: other, followee: user, followedAt: nil)),
        .messageSent(MessageSent(message: .make(), from: user, to: other, text: "안녕")),
        .sessionStarted(
            SessionStarted(session: .make(), user: user, expiresAt: EventTime(millisecondsSince1970: 1_800_000_000_123))
        ),
        .sessionEnded(SessionEnded(session: .make(), user: user)),
        .postDeleted(PostDeleted(post: post, author: user, postedAt: LogPosition(12), repostOf: nil)),
        .postDeleted(PostDeleted(post: .make(), author: other, postedAt: LogPosition(13), repostOf: post)),
        .commentDeleted(
            CommentDeleted(comment: .make(), post: post, author: other, postAuthor: user, commentedAt: LogPosition(20))),
        .passwordChanged(PasswordChanged(user: user, passwordHash: "$2b$04$y", revokedResets: [])),
        .passwordChanged(PasswordChanged(user: user, passwordHash: "$2b$04$z", revokedResets: [.make(), .make()])),
        .passwordResetRequested(
            PasswordResetRequested(
                user: user, reset: .make(), expiresAt: EventTime(millisecondsSince1970: 1_800_000_000_456))),
        .blocked(Blocked(blocker: user, blocked: other)),
        .unblocked(Unblocked(blocker: user, blocked: other, blockedAt: LogPosition(30))),
        .muted(Muted(muter: other, muted: user)),
        .unmuted(Unmuted(muter: other, muted: user, mutedAt: LogPosition(31))),
        .reportFiled(
            ReportFiled(
                report: .make(), reporter: user, target: .comment(post, .make()), targetAuthor: other, reason: .abuse,
                details: "mean")),
        .reportFiled(
            ReportFiled(
                report: .make(), reporter: user, target: .user(other), targetAuthor: other, reason: .spam, details: "")),
        .reportResolved(ReportResolved(report: .make(), action: .suspendUser, filedAt: LogPosition(40))),
        .userSuspended(UserSuspended(user: other)),
        .userUnsuspended(UserUnsuspended(user: other)),
        .reposted(Reposted(user: other, post: post, postAuthor: user)),
        .unreposted(Unreposted(user: other, post: post, postAuthor: user, repostedAt: LogPosition(50))),
        .roomCreated(RoomCreated(room: room, creator: user, name: "Flash Chat")),
        .roomJoined(RoomJoined(room: room, user: other)),
        .roomLeft(RoomLeft(room: room, user: other, joinedAt: LogPosition(52))),
        .roomMessageSent(RoomMessageSent(message: .make(), room: room, from: other, text: "모두 안녕")),
        .notificationsRead(NotificationsRead(user: user, upTo: LogPosition(44))),
        .conversationRead(ConversationRead(reader: other, partner: user)),
        .passwordResetUnmatched(PasswordResetUnmatched()),
        .accountDeleted(AccountDeleted(user: other)),
        .erasureCompleted(ErasureCompleted(user: other)),
        .mediaRemoved(MediaRemoved(media: .make(), owner: user)),
        .deviceRegistered(
            DeviceRegistered(
                user: user, device: .make(), platform: .apns, environment: .sandbox, locale: "ko-KR",
                token: String(repeating: "ab", count: 32),
                tokenKey: DeviceRegistered.tokenKey(platform: .apns, token: String(repeating: "ab", count: 32)))),
        .deviceRegistered(
            DeviceRegistered(
                user: other, device: .make(), platform: .fcm, environment: .production, locale: nil, token: "f:c-m_1",
                tokenKey: DeviceRegistered.tokenKey(platform: .fcm, token: "f:c-m_1"))),
        .deviceForgotten(DeviceForgotten(user: user, device: .make(), tokenKey: "k", reason: .movedToAnotherUser)),
        .pushSettingsChanged(PushSettingsChanged(user: user, changes: [.likes: .off, .messages: .followed])),
        .pushSettingsChanged(PushSettingsChanged(user: user, changes: [:])),
        .bookmarked(Bookmarked(user: user, post: post)),
        .unbookmarked(Unbookmarked(user: user, post: post, bookmarkedAt: LogPosition(12))),
    ]

    private func recorded(_ event: NewEvent, position: UInt64 = 7) -> RecordedEvent {
        RecordedEvent(
            position: LogPosition(position), stream: "s", streamVersion: 1, type: event.type,
            schemaVersion: event.schemaVersion, recordedAt: .now, commandID: CommandID(),
            correlationID: CorrelationID(),
            actor: "", payload: event.payload)
    }

    @Test("every event type round-trips through its stored form", arguments: samples)
    func roundTrip(_ event: DomainEvent) throws {
        #expect(
            try DomainEvent(decoding: recorded(try event.encoded(keys: TestDataKeys.shared)), keys: TestDataKeys.shared)
                == event)
    }

    @Test("unknown types, unknown versions and damaged payloads are refused with the position")
    func refusals() throws {
        let good = try Self.samples[0].encoded(keys: TestDataKeys.shared)
        var unknownType = good
        unknownType.type = "Teleported"
        var unknownVersion = good
        unknownVersion.schemaVersion = 99
        var truncated = good
        truncated.payload.removeLast()
        var trailing = good
        trailing.payload.append(0)
        for damaged in [unknownType, unknownVersion, truncated, trailing] {
            let error = #expect(throws: DomainEventDecodingError.self) {
                try DomainEvent(decoding: recorded(damaged, position: 42), keys: TestDataKeys.shared)
            }
            #expect(error?.position == 42)
        }
    }

    @Test(
        "likes, unlikes, comments, follows and unfollows of schema version 1 still decode, without what version 2 added (upcasting)"
    )
    func versionOne() throws {
        let comment = CommentID.make()
        var likedV1 = PayloadWriter()
        var unlikedV1 = PayloadWriter()
        var commentV1 = PayloadWriter()
        var unfollowedV1 = PayloadWriter()
        unfollowedV1.write(Self.other)
        unfollowedV1.write(Self.user)
        var followedV1 = PayloadWriter()
        followedV1.write(Self.other)
        followedV1.write(Self.user)
        likedV1.write(Self.other)
        likedV1.write(Self.post)
        unlikedV1.write(Self.other)
        unlikedV1.write(Self.post)
        commentV1.write(comment)
        commentV1.write(Self.post)
        commentV1.write(Self.other)
        commentV1.write("first")
        let stored = [
            NewEvent(type: "Liked", schemaVersion: 1, payload: likedV1.bytes),
            NewEvent(type: "Unliked", schemaVersion: 1, payload: unlikedV1.bytes),
            NewEvent(type: "CommentAdded", schemaVersion: 1, payload: commentV1.bytes),
            NewEvent(type: "Unfollowed", schemaVersion: 1, payload: unfollowedV1.bytes),
            NewEvent(type: "Followed", schemaVersion: 1, payload: followedV1.bytes),
        ]
        #expect(
            try stored.map { try DomainEvent(decoding: recorded($0), keys: TestDataKeys.shared) } == [
                .liked(Liked(user: Self.other, post: Self.post, postAuthor: nil)),
                .unliked(Unliked(user: Self.other, post: Self.post, postAuthor: nil, likedAt: nil)),
                .commentAdded(
                    CommentAdded(comment: comment, post: Self.post, author: Self.other, text: "first", postAuthor: nil)),
                .unfollowed(Unfollowed(follower: Self.other, followee: Self.user, followedAt: nil)),
                .followed(Followed(follower: Self.other, followee: Self.user)),
            ])
        // New events are written with the current version, and a version-2 payload is not read as version 1.
        let current = try DomainEvent.liked(Liked(user: Self.other, post: Self.post, postAuthor: Self.user)).encoded(
            keys: TestDataKeys.shared)
        #expect(current.schemaVersion == 2)
        var misread = current
        misread.schemaVersion = 1
        #expect(throws: DomainEventDecodingError.self) {
            try DomainEvent(decoding: recorded(misread), keys: TestDataKeys.shared)
        }
        var future = current
        future.schemaVersion = 3
        #expect(throws: DomainEventDecodingError.self) {
            try DomainEvent(decoding: recorded(future), keys: TestDataKeys.shared)
        }
    }

    @Test("events go to their aggregate's stream; a conversation's stream is the same from either side")
    func streams() {
        let message = MessageSent(message: .make(), from: Self.user, to: Self.other, text: "x")
        var reply = message
        (reply.from, reply.to) = (message.to, message.from)
        #expect(DomainEvent.messageSent(message).stream == DomainEvent.messageSent(reply).stream)
        #expect(
            DomainEvent.liked(Liked(user: Self.user, post: Self.post, postAuthor: Self.other)).stream.rawValue
                == "post-\(Self.post)")
        #expect(
            DomainEvent.followed(Followed(follower: Self.user, followee: Self.other)).stream.rawValue
                == "user-\(Self.user)")
    }

    @Test("ids are 26 URL-safe characters, sort by creation, and malformed ones are refused")
    func identifiers() {
        // More than one millisecond's 4,096 sequence numbers: the order holds past them.
        let ids = (0..<10_000).map { _ in PostID.make() }
        #expect(ids == ids.sorted())
        #expect(Set(ids).count == 10_000)
        #expect(ids.allSatisfy { $0.rawValue.count == 26 && PostID($0.rawValue) == $0 })
        for bad in ["", "../../etc/passwd", String(repeating: "A", count: 26), String(repeating: "0", count: 25)] {
            #expect(PostID(bad) == nil)
        }
    }
}
