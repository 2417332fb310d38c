import ChorusLog

/// What each event changes in the decision state, and applying it: the one place the state follows from the events,
/// for the command path, the importer and the audit alike.
extension DecisionState {
    /// What `event`, appended at `position`, changes in the state. The command path applies it in the append's own
    /// transaction; ``DecisionStateAudit`` folds the whole log through it to recompute the state.
    func changes(for event: DomainEvent, at position: LogPosition) -> ChangeList {
        var changes = ChangeList()
        appendChanges(for: event, at: position, to: &changes)
        return changes
    }

    /// ``changes(for:at:)``, appended to `changes`: an import collects a whole batch's changes in one list.
    func appendChanges(for event: DomainEvent, at position: LogPosition, to changes: inout ChangeList) {
        typealias Key = ChangeList.Key
        // An edge between two ids, held since `position`; and a key removed.
        func edge(_ table: StateTable, _ first: String, _ second: String) {
            changes.put(table, Key(first, second), since: position)
        }
        func remove(_ table: StateTable, _ key: Key) { changes.remove(table, key) }
        switch event {
        case .userRegistered(let event):
            changes.put(emails, Key(Validate.emailKey(event.email)), text: event.user.rawValue)
            changes.put(users, Key(event.user.rawValue), text: event.passwordHash)
        case .postCreated(let event):
            changes.put(
                posts, Key(event.post.rawValue),
                PostState(
                    author: event.author, textMayBeEmpty: event.image != nil || event.repostOf != nil, deleted: false,
                    postedAt: position, repostOf: event.repostOf
                ).encoded())
            if Self.isPlainRepost(event) {
                changes.put(reposts, Key(event.repostOf!.rawValue, event.post.rawValue), [])
            }
        case .postDeleted(let event):
            changes.put(
                posts, Key(event.post.rawValue),
                PostState(
                    author: event.author, textMayBeEmpty: false, deleted: true, postedAt: event.postedAt,
                    repostOf: event.repostOf
                ).encoded())
            if let original = event.repostOf { remove(reposts, Key(original.rawValue, event.post.rawValue)) }
        case .commentAdded(let event):
            changes.put(
                comments, Key(event.comment.rawValue),
                CommentState(post: event.post, author: event.author, commentedAt: position, deleted: false).encoded())
        case .commentDeleted(let event):
            changes.put(
                comments, Key(event.comment.rawValue),
                CommentState(post: event.post, author: event.author, commentedAt: event.commentedAt, deleted: true)
                    .encoded())
        case .followed(let event):
            edge(follows, event.follower.rawValue, event.followee.rawValue)
        case .unfollowed(let event):
            remove(follows, Key(event.follower.rawValue, event.followee.rawValue))
        case .liked(let event):
            edge(likes, event.user.rawValue, event.post.rawValue)
        case .unliked(let event):
            remove(likes, Key(event.user.rawValue, event.post.rawValue))
        case .reposted(let event):
            edge(shares, event.post.rawValue, event.user.rawValue)
        case .unreposted(let event):
            remove(shares, Key(event.post.rawValue, event.user.rawValue))
        case .messageSent(let event):
            let (first, second) = Self.pair(event.from, event.to)
            edge(conversationHeads, first.rawValue, second.rawValue)
        case .notificationsRead(let event):
            changes.put(notificationReads, Key(event.user.rawValue), since: event.upTo)
        case .conversationRead(let event):
            edge(conversationReads, event.reader.rawValue, event.partner.rawValue)
        case .roomCreated(let event):
            changes.put(rooms, Key(event.room.rawValue), text: event.creator.rawValue)
        case .roomJoined(let event):
            edge(roomMembers, event.room.rawValue, event.user.rawValue)
        case .roomLeft(let event):
            remove(roomMembers, Key(event.room.rawValue, event.user.rawValue))
        case .sessionStarted(let event):
            changes.put(sessions, Key(event.session.rawValue)) { Self.appendSessionValue(event, to: &$0) }
            changes.put(userSessions, Key(event.user.rawValue, event.session.rawValue), [])
        case .sessionEnded(let event):
            remove(sessions, Key(event.session.rawValue))
            remove(userSessions, Key(event.user.rawValue, event.session.rawValue))
        case .passwordChanged(let event):
            changes.put(users, Key(event.user.rawValue), text: event.passwordHash)
            for reset in event.revokedResets { remove(resets, Key(event.user.rawValue, reset.rawValue)) }
        case .blocked(let event):
            edge(blocks, event.blocker.rawValue, event.blocked.rawValue)
        case .unblocked(let event):
            remove(blocks, Key(event.blocker.rawValue, event.blocked.rawValue))
        case .muted(let event):
            edge(mutes, event.muter.rawValue, event.muted.rawValue)
        case .unmuted(let event):
            remove(mutes, Key(event.muter.rawValue, event.muted.rawValue))
        case .reportFiled(let event):
            changes.put(
                reports, Key(event.report.rawValue),
                OpenReport(filedAt: position, target: event.target, targetAuthor: event.targetAuthor).encoded())
            changes.put(
                reportSubjects, Key(event.reporter.rawValue, Self.reportSubjectKey(event.target)),
                text: event.report.rawValue)
        case .reportResolved(let event):
            remove(reports, Key(event.report.rawValue))
            changes.put(resolvedReports, Key(event.report.rawValue), [])
        case .userSuspended(let event):
            changes.put(suspended, Key(event.user.rawValue), [])
        case .userUnsuspended(let event):
            remove(suspended, Key(event.user.rawValue))
        case .passwordResetRequested(let event):
            withUnsafeBytes(of: event.expiresAt.millisecondsSince1970.bigEndian) {
                changes.put(resets, Key(event.user.rawValue, event.reset.rawValue), $0)
            }
        case .accountDeleted(let event):
            remove(users, Key(event.user.rawValue))
            changes.removeEntries(of: emails, holding: event.user.rawValue)
            changes.put(erasures, Key(event.user.rawValue), since: position)
        case .erasureCompleted(let event):
            changes.put(completedErasures, Key(event.user.rawValue), since: position)
        case .profileEdited, .postEdited, .roomMessageSent, .passwordResetUnmatched:
            break
        }
    }

    /// Records what `event`, appended at `position`, changes in the state; called in the same transaction.
    func apply(_ event: DomainEvent, at position: LogPosition, in state: some StateWriter) throws {
        let changes = changes(for: event, at: position)
        try apply(changes, at: 0..<changes.count, in: state)
    }

    /// Records the changes of `changes` at `offsets` (of events appended in the same transaction).
    func apply(_ changes: ChangeList, at offsets: Range<Int>, in state: some StateWriter) throws {
        try changes.forEachChange(in: offsets) { change, key, value in
            let table = ChangeList.table(at: change.place)
            if change.removesEntriesHolding, let held = value {
                // A scan of the table: an account deletion is rare, and already scans the tables it empties.
                var holding: [[UInt8]] = []
                try state.forEach(in: table) { key, value in
                    if value.elementsEqual(held) { holding.append(Array(key)) }
                    return true
                }
                for key in holding { try state.delete(key, in: table) }
            } else if let value {
                try state.put(Array(value), for: Array(key), in: table)
            } else {
                try state.delete(Array(key), in: table)
            }
        }
    }

    /// A session as stored: its user, NUL, and its expiry.
    private static func appendSessionValue(_ event: SessionStarted, to value: inout [UInt8]) {
        value.appendUTF8(of: event.user.rawValue)
        value.append(0)
        withUnsafeBytes(of: event.expiresAt.millisecondsSince1970.bigEndian) { value.append(contentsOf: $0) }
    }
}
