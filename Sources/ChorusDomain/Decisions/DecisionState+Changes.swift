import ChorusLog

/// What each event changes in the decision state, and applying it: the one place the state follows from the events,
/// for the command path, the importer and the audit alike.
extension DecisionState {
    /// One change an event makes to the state: a value put under a key, or the key removed.
    struct Change {
        let table: StateTable
        let key: [UInt8]
        /// Nil: the key is removed.
        let value: [UInt8]?
        /// Set: instead, every entry of `table` holding this value is removed. For the e-mail index, whose key an
        /// erased account's events no longer give (their e-mail is unreadable).
        var removingEntriesHolding: [UInt8]?

        init(table: StateTable, key: [UInt8], value: [UInt8]?) {
            (self.table, self.key, self.value) = (table, key, value)
        }

        init(table: StateTable, removingEntriesHolding value: [UInt8]) {
            (self.table, key, self.value, removingEntriesHolding) = (table, [], nil, value)
        }
    }

    /// What `event`, appended at `position`, changes in the state. The command path applies it in the append's own
    /// transaction; ``DecisionStateAudit`` folds the whole log through it to recompute the state.
    func changes(for event: DomainEvent, at position: LogPosition) -> [Change] {
        var changes: [Change] = []
        appendChanges(for: event, at: position, to: &changes)
        return changes
    }

    /// ``changes(for:at:)``, appended to `changes`: an import collects a whole batch's changes in one array.
    func appendChanges(for event: DomainEvent, at position: LogPosition, to changes: inout [Change]) {
        // An edge between two ids, held since `position`; and a key removed.
        func edge(_ table: StateTable, _ first: String, _ second: String) {
            changes.append(Change(table: table, key: Self.key(first, second), value: Edge.value(since: position)))
        }
        func remove(_ table: StateTable, _ key: [UInt8]) { changes.append(Change(table: table, key: key, value: nil)) }
        switch event {
        case .userRegistered(let event):
            changes.append(
                Change(
                    table: emails, key: Self.key(Validate.emailKey(event.email)), value: Array(event.user.rawValue.utf8)
                ))
            changes.append(
                Change(table: users, key: Self.key(event.user.rawValue), value: Array(event.passwordHash.utf8)))
        case .postCreated(let event):
            changes.append(
                Change(
                    table: posts, key: Self.key(event.post.rawValue),
                    value: PostState(
                        author: event.author, textMayBeEmpty: event.image != nil || event.repostOf != nil,
                        deleted: false, postedAt: position, repostOf: event.repostOf
                    ).encoded()))
            if Self.isPlainRepost(event) {
                changes.append(
                    Change(table: reposts, key: Self.key(event.repostOf!.rawValue, event.post.rawValue), value: []))
            }
        case .postDeleted(let event):
            changes.append(
                Change(
                    table: posts, key: Self.key(event.post.rawValue),
                    value: PostState(
                        author: event.author, textMayBeEmpty: false, deleted: true, postedAt: event.postedAt,
                        repostOf: event.repostOf
                    ).encoded()))
            if let original = event.repostOf { remove(reposts, Self.key(original.rawValue, event.post.rawValue)) }
        case .commentAdded(let event):
            changes.append(
                Change(
                    table: comments, key: Self.key(event.comment.rawValue),
                    value: CommentState(post: event.post, author: event.author, commentedAt: position, deleted: false)
                        .encoded()))
        case .commentDeleted(let event):
            changes.append(
                Change(
                    table: comments, key: Self.key(event.comment.rawValue),
                    value: CommentState(
                        post: event.post, author: event.author, commentedAt: event.commentedAt, deleted: true
                    ).encoded()))
        case .followed(let event):
            edge(follows, event.follower.rawValue, event.followee.rawValue)
        case .unfollowed(let event):
            remove(follows, Self.key(event.follower.rawValue, event.followee.rawValue))
        case .liked(let event):
            edge(likes, event.user.rawValue, event.post.rawValue)
        case .unliked(let event):
            remove(likes, Self.key(event.user.rawValue, event.post.rawValue))
        case .reposted(let event):
            edge(shares, event.post.rawValue, event.user.rawValue)
        case .unreposted(let event):
            remove(shares, Self.key(event.post.rawValue, event.user.rawValue))
        case .messageSent(let event):
            changes.append(
                Change(
                    table: conversationHeads, key: Self.pairKey(event.from, event.to),
                    value: Edge.value(since: position)))
        case .notificationsRead(let event):
            changes.append(
                Change(
                    table: notificationReads, key: Self.key(event.user.rawValue), value: Edge.value(since: event.upTo)))
        case .conversationRead(let event):
            edge(conversationReads, event.reader.rawValue, event.partner.rawValue)
        case .roomCreated(let event):
            changes.append(
                Change(table: rooms, key: Self.key(event.room.rawValue), value: Array(event.creator.rawValue.utf8)))
        case .roomJoined(let event):
            edge(roomMembers, event.room.rawValue, event.user.rawValue)
        case .roomLeft(let event):
            remove(roomMembers, Self.key(event.room.rawValue, event.user.rawValue))
        case .sessionStarted(let event):
            changes.append(
                Change(table: sessions, key: Self.key(event.session.rawValue), value: Self.sessionValue(event)))
            changes.append(
                Change(table: userSessions, key: Self.key(event.user.rawValue, event.session.rawValue), value: []))
        case .sessionEnded(let event):
            remove(sessions, Self.key(event.session.rawValue))
            remove(userSessions, Self.key(event.user.rawValue, event.session.rawValue))
        case .passwordChanged(let event):
            changes.append(
                Change(table: users, key: Self.key(event.user.rawValue), value: Array(event.passwordHash.utf8)))
            for reset in event.revokedResets { remove(resets, Self.key(event.user.rawValue, reset.rawValue)) }
        case .blocked(let event):
            edge(blocks, event.blocker.rawValue, event.blocked.rawValue)
        case .unblocked(let event):
            remove(blocks, Self.key(event.blocker.rawValue, event.blocked.rawValue))
        case .muted(let event):
            edge(mutes, event.muter.rawValue, event.muted.rawValue)
        case .unmuted(let event):
            remove(mutes, Self.key(event.muter.rawValue, event.muted.rawValue))
        case .reportFiled(let event):
            changes.append(
                Change(
                    table: reports, key: Self.key(event.report.rawValue),
                    value: OpenReport(filedAt: position, target: event.target, targetAuthor: event.targetAuthor)
                        .encoded()))
        case .reportResolved(let event):
            remove(reports, Self.key(event.report.rawValue))
            changes.append(Change(table: resolvedReports, key: Self.key(event.report.rawValue), value: []))
        case .userSuspended(let event):
            changes.append(Change(table: suspended, key: Self.key(event.user.rawValue), value: []))
        case .userUnsuspended(let event):
            remove(suspended, Self.key(event.user.rawValue))
        case .passwordResetRequested(let event):
            changes.append(
                Change(
                    table: resets, key: Self.key(event.user.rawValue, event.reset.rawValue),
                    value: withUnsafeBytes(of: event.expiresAt.millisecondsSince1970.bigEndian, Array.init)))
        case .accountDeleted(let event):
            remove(users, Self.key(event.user.rawValue))
            changes.append(Change(table: emails, removingEntriesHolding: Array(event.user.rawValue.utf8)))
            changes.append(
                Change(table: erasures, key: Self.key(event.user.rawValue), value: Edge.value(since: position)))
        case .erasureCompleted(let event):
            changes.append(
                Change(
                    table: completedErasures, key: Self.key(event.user.rawValue), value: Edge.value(since: position)))
        case .profileEdited, .postEdited, .roomMessageSent:
            break
        }
    }

    /// Records what `event`, appended at `position`, changes in the state; called in the same transaction.
    func apply(_ event: DomainEvent, at position: LogPosition, in state: some StateWriter) throws {
        try apply(changes(for: event, at: position)[...], in: state)
    }

    /// Records `changes` (``changes(for:at:)`` of events appended in the same transaction). A slice rather than any
    /// sequence: unspecialised, the loop allocated a box for every change it read.
    func apply(_ changes: ArraySlice<Change>, in state: some StateWriter) throws {
        for change in changes {
            if let held = change.removingEntriesHolding {
                // A scan of the table: an account deletion is rare, and already scans the tables it empties.
                var holding: [[UInt8]] = []
                try state.forEach(in: change.table) { key, value in
                    if value.elementsEqual(held) { holding.append(Array(key)) }
                    return true
                }
                for key in holding { try state.delete(key, in: change.table) }
            } else if let value = change.value {
                try state.put(value, for: change.key, in: change.table)
            } else {
                _ = try state.delete(change.key, in: change.table)
            }
        }
    }

    /// A session as stored: its user, NUL, and its expiry.
    private static func sessionValue(_ event: SessionStarted) -> [UInt8] {
        var value = Array(event.user.rawValue.utf8) + [0]
        withUnsafeBytes(of: event.expiresAt.millisecondsSince1970.bigEndian) { value.append(contentsOf: $0) }
        return value
    }
}
