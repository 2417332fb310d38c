import ChorusDomain
import ChorusLog

/// Profiles, the follow edges, and the followers and following tabs (their counts: ``ProfileCounters``).
///
/// - `profiles`: user → ``ProfileRecord``
/// - `follow-edges`: follower, followee → position of the follow
/// - `followers`: followee, position, follower → empty (the followers tab, newest first)
/// - `following`: follower, position, followee → empty (the following tab)
struct Profiles: ReadModel {
    static let tables = [Tables.profiles, Tables.followEdges, Tables.followers, Tables.following]

    let profiles: StoreTable
    let edges: StoreTable
    let followers: StoreTable
    let following: StoreTable

    init(store: KeyValueStore) {
        profiles = store.table(Tables.profiles)
        edges = store.table(Tables.followEdges)
        followers = store.table(Tables.followers)
        following = store.table(Tables.following)
    }

    func apply(_ event: DomainEvent, at envelope: EventEnvelope, in transaction: StoreTransaction) throws {
        switch event {
        case .userRegistered(let event):
            let record = ProfileRecord(
                name: event.name, major: event.major, bio: event.bio, profileImage: nil, email: event.email)
            try transaction.put(record.encoded(), for: ProjectionKey(event.user).bytes, in: profiles)
        case .profileEdited(let event):
            try update(event.user, in: transaction) { record in
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
        case .postCreated, .liked, .unliked, .commentAdded, .messageSent, .sessionStarted, .sessionEnded:
            break
        }
    }

    private func tabKey(_ owner: UserID, _ position: LogPosition, _ other: UserID) -> [UInt8] {
        var key = ProjectionKey(owner)
        key.append(position)
        key.append(other)
        return key.bytes
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

/// A profile as stored: everything but its counters and who looks at it.
struct ProfileRecord: Hashable {
    var name: String
    var major: String
    var bio: String
    var profileImage: MediaID?
    var email: String

    func encoded() -> [UInt8] {
        var writer = PayloadWriter()
        writer.write(name)
        writer.write(major)
        writer.write(bio)
        writer.write(profileImage)
        writer.write(email)
        return writer.bytes
    }

    init(name: String, major: String, bio: String, profileImage: MediaID?, email: String) {
        self.name = name
        self.major = major
        self.bio = bio
        self.profileImage = profileImage
        self.email = email
    }

    init(decoding bytes: [UInt8]) throws {
        var reader = PayloadReader(bytes)
        name = try reader.readString()
        major = try reader.readString()
        bio = try reader.readString()
        profileImage = try reader.readOptional(MediaID.self)
        email = try reader.readString()
        try reader.finish()
    }

    /// Only what a user summary shows, which every post, comment and notification embeds, read in place (see
    /// ``StoredUserSummary``): the bio is skipped, the e-mail not read.
    static func summaryFields(in bytes: UnsafeRawBufferPointer) throws -> (
        name: UnsafeRawBufferPointer, major: UnsafeRawBufferPointer, profileImage: UnsafeRawBufferPointer?
    ) {
        var cursor = PayloadCursor(bytes)
        let name = try cursor.readUTF8()
        let major = try cursor.readUTF8()
        _ = try cursor.readUTF8()
        return (name, major, try cursor.readOptionalUTF8())
    }
}
