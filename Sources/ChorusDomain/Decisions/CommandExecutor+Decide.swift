import ChorusLog

extension CommandExecutor {
    /// Decides inside the writer's transaction. Every check comes before the append and the state change, so a
    /// refusal writes nothing.
    static func decide(
        _ command: PreparedCommand, state: DecisionState, keys: any PersonalDataKeys, in batch: any DecisionBatch
    ) throws -> CommandResult {
        let transaction = batch.state
        let unchanged = CommandResult(position: batch.head, appended: false, createdID: nil)
        /// Appends `events`, which share one stream.
        func record(_ events: DomainEvent..., created: String? = nil, session: SessionStarted? = nil) throws
            -> CommandResult
        {
            try record(events, created: created, session: session)
        }
        func record(_ events: [DomainEvent], created: String? = nil, session: SessionStarted? = nil) throws
            -> CommandResult
        {
            let outcome = try batch.append(
                AppendRequest(
                    stream: events[0].stream, events: try events.map { try $0.encoded(keys: keys) },
                    actor: command.actor))
            for (offset, event) in events.enumerated() {
                try state.apply(
                    event, at: LogPosition(outcome.firstPosition.rawValue + UInt64(offset)), in: transaction)
            }
            return CommandResult(
                position: outcome.lastPosition, appended: true, createdID: created,
                session: session)
        }
        /// Appends each of `events` to its own stream, correlated with the first.
        func recordEach(_ events: [DomainEvent]) throws -> CommandResult {
            var correlation: CorrelationID?
            var last = batch.head
            for event in events {
                let request = AppendRequest(
                    stream: event.stream, events: [try event.encoded(keys: keys)], correlationID: correlation,
                    actor: command.actor)
                correlation = request.correlationID
                last = try batch.append(request).lastPosition
                try state.apply(event, at: last, in: transaction)
            }
            return CommandResult(position: last, appended: true, createdID: nil)
        }
        func requireUser(_ user: UserID) throws {
            guard try state.exists(user, in: transaction) else { throw DomainError(.unknownUser, "no user \(user)") }
        }
        /// The post's author; throws if there is no such post, or it was deleted (as a post a command names in its
        /// body).
        func requirePost(_ post: PostID) throws {
            guard try state.author(of: post, in: transaction) != nil else {
                throw DomainError(.unknownPost, "no post \(post)")
            }
        }
        func requireRoom(_ room: RoomID) throws {
            guard try state.roomExists(room, in: transaction) else { throw DomainError(.notFound, "no room \(room)") }
        }
        /// Refuses what one user does to another when either blocked the other.
        func refuseIfBlocked(_ user: UserID, _ other: UserID) throws {
            guard user != other, try state.eitherBlocked(user, other, in: transaction) else { return }
            throw DomainError(.blocked, "one of the two users blocked the other")
        }
        /// Records the new password, revokes the open resets and ends every session but `keep`.
        func changePassword(of user: UserID, to hash: String, keeping keep: SessionID?) throws -> CommandResult {
            let change = PasswordChanged(
                user: user, passwordHash: hash, revokedResets: try state.resets(of: user, in: transaction))
            let ended = try state.sessions(of: user, in: transaction).filter { $0 != keep }
            return try record(
                [.passwordChanged(change)] + ended.map { .sessionEnded(SessionEnded(session: $0, user: user)) })
        }
        /// The post a command acts on (its path names it): unknown if there never was one, gone if it was deleted.
        func requireStandingPost(_ post: PostID) throws -> DecisionState.PostState {
            guard let found = try state.post(post, in: transaction) else {
                throw DomainError(.unknownPost, "no post \(post)")
            }
            guard !found.deleted else { throw DomainError(.gone, "post \(post) was deleted") }
            return found
        }

        switch command.decision {
        case .register(let event, let session):
            guard try state.user(withEmailKey: Validate.emailKey(event.email), in: transaction) == nil else {
                throw DomainError(.emailTaken, "\(event.email) is already registered")
            }
            return try record(
                .userRegistered(event), .sessionStarted(session), created: event.user.rawValue, session: session)
        case .logIn:
            preconditionFailure("execute turns a login into startSession once the password is checked")
        case .startSession(let session):
            try requireUser(session.user)
            guard try !state.isSuspended(session.user, in: transaction) else {
                throw DomainError(.suspended, "this account is suspended")
            }
            return try record(.sessionStarted(session), session: session)
        case .logOut(let user, let session):
            guard try state.session(session, in: transaction)?.user == user else { return unchanged }
            return try record(.sessionEnded(SessionEnded(session: session, user: user)))
        case .changePassword(let user, let keep, let newHash, let checkedHash):
            // Checked outside the writer; a change that came in between makes the check stale.
            guard try state.passwordHash(of: user, in: transaction) == checkedHash else {
                throw DomainError(.wrongPassword, "the password changed meanwhile")
            }
            return try changePassword(of: user, to: newHash, keeping: keep)
        case .requestPasswordReset(let emailKey, var reset):
            // One event either way: a request for an e-mail no account has moves the log's head as one that found
            // an account does.
            guard let user = try state.user(withEmailKey: emailKey, in: transaction) else {
                return try record(.passwordResetUnmatched(PasswordResetUnmatched()))
            }
            reset.user = user
            return try record(.passwordResetRequested(reset))
        case .resetPassword(let user, let reset, let newHash):
            guard let expiresAt = try state.reset(reset, of: user, in: transaction), batch.recordedAt < expiresAt else {
                throw DomainError(.invalidToken, "the reset token is unknown, used or expired")
            }
            try requireUser(user)
            return try changePassword(of: user, to: newHash, keeping: nil)
        case .editProfile(let event):
            try requireUser(event.user)
            return try record(.profileEdited(event))
        case .createPost(var event):
            try requireUser(event.author)
            if let named = event.repostOf {
                try requirePost(named)
                // A repost always points at an original: one of a plain repost reposts what that one reposts.
                let original = try state.repostTarget(of: named, in: transaction)
                try refuseIfBlocked(event.author, original.author)
                event.repostOf = original.post
            }
            return try record(.postCreated(event), created: event.post.rawValue)
        case .editPost(let event):
            try requireUser(event.author)
            let post = try requireStandingPost(event.post)
            guard post.author == event.author else {
                throw DomainError(.forbidden, "only its author can edit post \(event.post)")
            }
            if event.text == "", !post.textMayBeEmpty {
                throw DomainError(.emptyText, "a post without an image or a reposted post needs text")
            }
            return try record(.postEdited(event))
        case .deletePost(let author, let post):
            try requireUser(author)
            guard let found = try state.post(post, in: transaction) else {
                throw DomainError(.unknownPost, "no post \(post)")
            }
            guard found.author == author else {
                throw DomainError(.forbidden, "only its author can delete post \(post)")
            }
            guard !found.deleted else { return unchanged }
            let deletions = try state.deletions(of: post, found, in: transaction)
            return try recordEach(deletions)
        case .like(let user, let post):
            try requireUser(user)
            let author = try requireStandingPost(post).author
            try refuseIfBlocked(user, author)
            guard try !state.like(user, post, in: transaction).exists else { return unchanged }
            return try record(.liked(Liked(user: user, post: post, postAuthor: author)))
        case .unlike(let user, let post):
            try requireUser(user)
            let author = try requireStandingPost(post).author
            let like = try state.like(user, post, in: transaction)
            guard like.exists else { return unchanged }
            return try record(.unliked(Unliked(user: user, post: post, postAuthor: author, likedAt: like.since)))
        case .repost(let user, let post):
            try requireUser(user)
            let original = try state.repostTarget(of: post, in: transaction)
            try refuseIfBlocked(user, original.author)
            // The answer names the post reposted, which is not the one named when that was a plain repost.
            guard try !state.share(user, original.post, in: transaction).exists else {
                return CommandResult(position: batch.head, appended: false, createdID: original.post.rawValue)
            }
            return try record(
                .reposted(Reposted(user: user, post: original.post, postAuthor: original.author)),
                created: original.post.rawValue)
        case .unrepost(let user, let post):
            try requireUser(user)
            let original = try state.repostTarget(of: post, in: transaction)
            guard let since = try state.share(user, original.post, in: transaction).since else {
                return CommandResult(position: batch.head, appended: false, createdID: original.post.rawValue)
            }
            return try record(
                .unreposted(
                    Unreposted(user: user, post: original.post, postAuthor: original.author, repostedAt: since)),
                created: original.post.rawValue)
        case .addComment(var event):
            try requireUser(event.author)
            event.postAuthor = try requireStandingPost(event.post).author
            try refuseIfBlocked(event.author, event.postAuthor!)
            return try record(.commentAdded(event), created: event.comment.rawValue)
        case .deleteComment(let user, let post, let comment):
            try requireUser(user)
            let postAuthor = try requireStandingPost(post).author
            guard let found = try state.comment(comment, in: transaction), found.post == post else {
                throw DomainError(.notFound, "no comment \(comment) on post \(post)")
            }
            guard user == found.author || user == postAuthor else {
                throw DomainError(.forbidden, "only its author or the post's author can delete comment \(comment)")
            }
            guard !found.deleted else { return unchanged }
            return try record(
                .commentDeleted(
                    CommentDeleted(
                        comment: comment, post: post, author: found.author, postAuthor: postAuthor,
                        commentedAt: found.commentedAt)))
        case .block(let blocker, let blocked):
            try requireUser(blocker)
            try requireUser(blocked)
            guard try !state.block(blocker, blocked, in: transaction).exists else { return unchanged }
            // Both follows between them end with it.
            var events = [DomainEvent.blocked(Blocked(blocker: blocker, blocked: blocked))]
            for (follower, followee) in [(blocker, blocked), (blocked, blocker)] {
                let follow = try state.follow(follower, followee, in: transaction)
                guard follow.exists else { continue }
                events.append(
                    .unfollowed(Unfollowed(follower: follower, followee: followee, followedAt: follow.since)))
            }
            return try recordEach(events)
        case .unblock(let blocker, let blocked):
            try requireUser(blocker)
            try requireUser(blocked)
            let block = try state.block(blocker, blocked, in: transaction)
            guard block.exists, let since = block.since else { return unchanged }
            return try record(.unblocked(Unblocked(blocker: blocker, blocked: blocked, blockedAt: since)))
        case .mute(let muter, let muted):
            try requireUser(muter)
            try requireUser(muted)
            guard try !state.mute(muter, muted, in: transaction).exists else { return unchanged }
            return try record(.muted(Muted(muter: muter, muted: muted)))
        case .unmute(let muter, let muted):
            try requireUser(muter)
            try requireUser(muted)
            let mute = try state.mute(muter, muted, in: transaction)
            guard mute.exists, let since = mute.since else { return unchanged }
            return try record(.unmuted(Unmuted(muter: muter, muted: muted, mutedAt: since)))
        case .fileReport(var report, let subject):
            try requireUser(report.reporter)
            switch subject {
            case .post(let post):
                guard let author = try state.author(of: post, in: transaction) else {
                    throw DomainError(.unknownPost, "no post \(post)")
                }
                (report.target, report.targetAuthor) = (.post(post), author)
            case .comment(let comment):
                guard let found = try state.comment(comment, in: transaction), !found.deleted,
                    try state.author(of: found.post, in: transaction) != nil
                else { throw DomainError(.invalidField, "commentId: no comment \(comment)") }
                (report.target, report.targetAuthor) = (.comment(found.post, comment), found.author)
            case .user(let user):
                try requireUser(user)
                (report.target, report.targetAuthor) = (.user(user), user)
            }
            // The same reporter reporting the same thing again, while their report of it is open: that report.
            if let open = try state.openReport(by: report.reporter, of: report.target, in: transaction) {
                return CommandResult(position: batch.head, appended: false, createdID: open.rawValue)
            }
            return try record(.reportFiled(report), created: report.report.rawValue)
        case .resolveReport(let id, let action):
            guard let report = try state.openReport(id, in: transaction) else {
                guard try state.isResolved(id, in: transaction) else {
                    throw DomainError(.notFound, "no report \(id)")
                }
                return unchanged
            }
            var events = [
                DomainEvent.reportResolved(ReportResolved(report: id, action: action, filedAt: report.filedAt))
            ]
            switch (action, report.target) {
            case (.dismiss, _):
                break
            case (.removeContent, .post(let post)):
                if let found = try state.post(post, in: transaction), !found.deleted {
                    events += try state.deletions(of: post, found, in: transaction)
                }
            case (.removeContent, .comment(let post, let comment)):
                if let found = try state.comment(comment, in: transaction), !found.deleted,
                    let postAuthor = try state.author(of: post, in: transaction)
                {
                    events.append(
                        .commentDeleted(
                            CommentDeleted(
                                comment: comment, post: post, author: found.author, postAuthor: postAuthor,
                                commentedAt: found.commentedAt)))
                }
            case (.removeContent, .user):
                throw DomainError(.invalidField, "action: a reported user is dismissed or suspended, not removed")
            case (.suspendUser, _):
                let user = report.targetAuthor
                if try !state.isSuspended(user, in: transaction) {
                    events.append(.userSuspended(UserSuspended(user: user)))
                    for session in try state.sessions(of: user, in: transaction) {
                        events.append(.sessionEnded(SessionEnded(session: session, user: user)))
                    }
                }
            }
            return try recordEach(events)
        case .unsuspend(let user):
            try requireUser(user)
            guard try state.isSuspended(user, in: transaction) else { return unchanged }
            return try record(.userUnsuspended(UserUnsuspended(user: user)))
        case .follow(let follower, let followee):
            try requireUser(follower)
            try requireUser(followee)
            try refuseIfBlocked(follower, followee)
            guard try !state.follow(follower, followee, in: transaction).exists else { return unchanged }
            return try record(.followed(Followed(follower: follower, followee: followee)))
        case .unfollow(let follower, let followee):
            try requireUser(follower)
            try requireUser(followee)
            let follow = try state.follow(follower, followee, in: transaction)
            guard follow.exists else { return unchanged }
            return try record(.unfollowed(Unfollowed(follower: follower, followee: followee, followedAt: follow.since)))
        case .deleteAccount(let user, let checkedHash):
            // Checked outside the writer; a password change that came in between makes the check stale.
            guard try state.passwordHash(of: user, in: transaction) == checkedHash else {
                throw DomainError(.wrongPassword, "the password changed meanwhile")
            }
            let deletions: [DomainEvent] = try state.erasure(of: user, in: transaction)
            try state.forgetRequests(byEmailOf: user, in: transaction)
            return try recordEach(deletions)
        case .completeErasure(let user):
            guard let erasure = try state.erasure(of: user, in: transaction), erasure.completedAt == nil else {
                return unchanged
            }
            return try record(.erasureCompleted(ErasureCompleted(user: user)))
        case .createRoom(let event):
            try requireUser(event.creator)
            return try record(
                .roomCreated(event), .roomJoined(RoomJoined(room: event.room, user: event.creator)),
                created: event.room.rawValue)
        case .joinRoom(let user, let room):
            try requireUser(user)
            try requireRoom(room)
            guard try !state.membership(of: user, in: room, state: transaction).exists else { return unchanged }
            return try record(.roomJoined(RoomJoined(room: room, user: user)))
        case .leaveRoom(let user, let room):
            try requireUser(user)
            try requireRoom(room)
            guard let since = try state.membership(of: user, in: room, state: transaction).since else {
                return unchanged
            }
            return try record(.roomLeft(RoomLeft(room: room, user: user, joinedAt: since)))
        case .sendRoomMessage(let event):
            try requireUser(event.from)
            try requireRoom(event.room)
            guard try state.membership(of: event.from, in: event.room, state: transaction).exists else {
                throw DomainError(.forbidden, "only members of room \(event.room) can write to it")
            }
            return try record(.roomMessageSent(event), created: event.message.rawValue)
        case .readNotifications(let user, let upTo):
            try requireUser(user)
            guard upTo <= batch.head else {
                throw DomainError(.invalidField, "upTo: no notification at position \(upTo) yet")
            }
            if let read = try state.notificationsRead(by: user, in: transaction), read >= upTo { return unchanged }
            return try record(.notificationsRead(NotificationsRead(user: user, upTo: upTo)))
        case .readConversation(let reader, let partner):
            try requireUser(reader)
            try requireUser(partner)
            guard try !state.hasReadConversation(reader, with: partner, in: transaction) else { return unchanged }
            return try record(.conversationRead(ConversationRead(reader: reader, partner: partner)))
        case .sendMessage(let event):
            try requireUser(event.from)
            try requireUser(event.to)
            try refuseIfBlocked(event.from, event.to)
            return try record(.messageSent(event), created: event.message.rawValue)
        }
    }
}
