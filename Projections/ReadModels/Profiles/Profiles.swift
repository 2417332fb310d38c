import ChorusDomain
import ChorusLog
import ChorusStorage

/// Profiles, the follow edges, and the followers and following tabs (their counts: ``ProfileCounters``; their
/// queries: Profiles+Queries.swift).
struct Profiles: ReadModel {
    /// user → ``ProfileRecord``
    static let profiles: StoreTableDefinition = "profiles"
    /// handle → user (the handle's owner now)
    static let handles: StoreTableDefinition = "handles"
    /// follower, followee → position of the follow
    static let edges: StoreTableDefinition = "follow-edges"
    /// followee, position, follower → empty (the followers tab, newest first)
    static let followers: StoreTableDefinition = "followers"
    /// follower, position, followee → empty (the following tab)
    static let following: StoreTableDefinition = "following"

    static let tables = [profiles, handles, edges, followers, following]
    /// An unfollow recorded before it carried the follow's position (schema version 1) reads `follow-edges`, which
    /// merges what a build loaded into it so far: slower, but only for old logs.
    static let tablesLoadedInKeyOrder = [following, followers, edges]

    let profiles: StoreTable
    let handles: StoreTable
    let edges: StoreTable
    let followers: StoreTable
    let following: StoreTable

    init(store: KeyValueStore) {
        profiles = store.table(Self.profiles)
        handles = store.table(Self.handles)
        edges = store.table(Self.edges)
        followers = store.table(Self.followers)
        following = store.table(Self.following)
    }

    func apply(_ event: DomainEvent, at envelope: EventEnvelope, in transaction: StoreTransaction) throws {
        switch event {
        case .userRegistered(let event):
            let record = ProfileRecord(
                name: event.name, major: event.major, bio: event.bio, profileImage: nil, email: event.email,
                handle: event.handle)
            try transaction.put(record.encoded(), for: ProjectionKey(event.user).bytes, in: profiles)
            try own(event.handle, event.user, in: transaction)
        case .profileEdited(let event):
            if let handle = event.handle, let record = try profileRecord(event.user, in: transaction) {
                try disown(record.handle, event.user, in: transaction)
                try own(handle, event.user, in: transaction)
            }
            try update(event.user, in: transaction) { record in
                if let handle = event.handle { record.handle = handle }
                if let isPrivate = event.isPrivate { record.isPrivate = isPrivate }
                if let name = event.name { record.name = name }
                if let major = event.major { record.major = major }
                if let bio = event.bio { record.bio = bio }
                switch event.profileImage {
                case nil: break
                case .remove?: record.profileImage = nil
                case .set(let media)?: record.profileImage = media
                }
            }
        case .followed(let event):
            var edge = ProjectionKey(event.follower)
            edge.append(event.followee)
            try transaction.put(PositionValue.encode(envelope.position), for: edge.bytes, in: edges)
            try transaction.put([], for: tabKey(event.followee, envelope.position, event.follower), in: followers)
            try transaction.put([], for: tabKey(event.follower, envelope.position, event.followee), in: following)
        case .unfollowed(let event):
            var edge = ProjectionKey(event.follower)
            edge.append(event.followee)
            guard let since = try event.followedAt ?? transaction.position(under: edge.bytes, in: edges) else { return }
            try transaction.delete(edge.bytes, in: edges)
            try transaction.delete(tabKey(event.followee, since, event.follower), in: followers)
            try transaction.delete(tabKey(event.follower, since, event.followee), in: following)
        case .accountDeleted(let event):
            // What stays of a deleted account: its id, shown as a deleted user where others still meet it (their
            // conversations). Its follows went before, in events of their own; its handle is free.
            if let record = try profileRecord(event.user, in: transaction) {
                try disown(record.handle, event.user, in: transaction)
            }
            try transaction.put(ProfileRecord.deleted.encoded(), for: ProjectionKey(event.user).bytes, in: profiles)
        case .postCreated, .postEdited, .postDeleted, .liked, .unliked, .reposted, .unreposted, .commentAdded,
            .commentDeleted, .messageSent, .roomCreated, .roomJoined, .roomLeft, .roomMessageSent, .notificationsRead,
            .conversationRead,
            .sessionStarted, .sessionEnded, .passwordChanged, .passwordResetRequested, .passwordResetUnmatched,
            .blocked, .unblocked, .muted,
            .unmuted, .reportFiled, .reportResolved, .userSuspended, .userUnsuspended, .erasureCompleted,
            .mediaRemoved, .deviceRegistered, .deviceForgotten, .pushSettingsChanged, .bookmarked, .unbookmarked,
            .wordMuted, .wordUnmuted, .followRequested, .followRequestEnded:
            break
        }
    }

    private func tabKey(_ owner: UserID, _ position: LogPosition, _ other: UserID) -> [UInt8] {
        var key = ProjectionKey(owner)
        key.append(position)
        key.append(other)
        return key.bytes
    }

    private func profileRecord(_ user: UserID, in transaction: StoreTransaction) throws -> ProfileRecord? {
        try transaction.value(for: ProjectionKey(user).bytes, in: profiles).map(ProfileRecord.init(decoding:))
    }

    /// `user` has `handle` now; an erased account's events have none.
    private func own(_ handle: String, _ user: UserID, in transaction: StoreTransaction) throws {
        guard !handle.isEmpty else { return }
        try transaction.put(Array(user.rawValue.utf8), for: Array(handle.utf8), in: handles)
    }

    /// `user` has `handle` no more, unless another took it meanwhile.
    private func disown(_ handle: String, _ user: UserID, in transaction: StoreTransaction) throws {
        guard !handle.isEmpty,
            try transaction.withValue(for: Array(handle.utf8), in: handles, { $0?.elementsEqual(user.rawValue.utf8) })
                == true
        else { return }
        try transaction.delete(Array(handle.utf8), in: handles)
    }

    private func update(_ user: UserID, in transaction: StoreTransaction, _ change: (inout ProfileRecord) -> Void)
        throws
    {
        let key = ProjectionKey(user).bytes
        guard let stored = try transaction.value(for: key, in: profiles) else { return }
        var record = try ProfileRecord(decoding: stored)
        change(&record)
        try transaction.put(record.encoded(), for: key, in: profiles)
    }
}

/// A profile as stored: everything but its counters and who looks at it. A deleted account's has nothing but
/// `deleted`.
struct ProfileRecord: Hashable {
    var name: String
    var major: String
    var bio: String
    var profileImage: MediaID?
    var email: String
    var handle: String
    /// Only accepted followers see the account's posts, tabs and lists.
    var isPrivate = false
    var deleted = false

    static let deleted = ProfileRecord(
        name: "", major: "", bio: "", profileImage: nil, email: "", handle: "", deleted: true)

    func encoded() -> [UInt8] {
        var writer = PayloadWriter()
        writer.write(name)
        writer.write(major)
        writer.write(bio)
        writer.write(profileImage)
        writer.write(email)
        writer.write(UInt8(deleted ? 1 : 0))
        writer.write(handle)
        writer.write(UInt8(isPrivate ? 1 : 0))
        return writer.bytes
    }

    init(
        name: String, major: String, bio: String, profileImage: MediaID?, email: String, handle: String,
        deleted: Bool = false
    ) {
        self.deleted = deleted
        self.name = name
        self.major = major
        self.bio = bio
        self.profileImage = profileImage
        self.email = email
        self.handle = handle
    }

    init(decoding bytes: [UInt8]) throws {
        // Copied inside the closure: the pointers of an `InPlace` are valid only there (past its last use `bytes`
        // may be freed, and a copy made later read freed memory).
        self = try bytes.withUnsafeBytes { ProfileRecord(try InPlace($0)) }
    }

    /// A copy of a record read in place.
    init(_ record: InPlace) {
        name = String(copying: record.name)
        major = String(copying: record.major)
        bio = String(copying: record.bio)
        profileImage = record.profileImage.map { MediaID(unchecked: String(copying: $0)) }
        email = String(copying: record.email)
        handle = String(copying: record.handle)
        isPrivate = record.isPrivate
        deleted = record.deleted
    }

    /// An encoded record read in place (see ``StoredUserSummary``, which every post embeds); the one reading of the
    /// format.
    struct InPlace {
        let name: UnsafeRawBufferPointer
        let major: UnsafeRawBufferPointer
        let bio: UnsafeRawBufferPointer
        let profileImage: UnsafeRawBufferPointer?
        let email: UnsafeRawBufferPointer
        let deleted: Bool
        let handle: UnsafeRawBufferPointer
        let isPrivate: Bool

        init(_ bytes: UnsafeRawBufferPointer) throws {
            var cursor = PayloadCursor(bytes)
            name = try cursor.readUTF8()
            major = try cursor.readUTF8()
            bio = try cursor.readUTF8()
            profileImage = try cursor.readOptionalUTF8()
            email = try cursor.readUTF8()
            deleted = try cursor.readByte() == 1
            handle = try cursor.readUTF8()
            isPrivate = try cursor.readByte() == 1
            try cursor.finish()
        }

        /// The summary of `user`, whose id is a buffer as long-lived as this record's.
        func summary(of user: UnsafeRawBufferPointer) -> SummaryInPlace {
            SummaryInPlace(
                id: user, handle: handle, name: name, major: major, profileImage: profileImage, deleted: deleted,
                isPrivate: isPrivate)
        }
    }
}
