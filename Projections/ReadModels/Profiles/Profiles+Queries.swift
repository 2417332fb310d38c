import ChorusDomain
import ChorusLog
import ChorusStorage

/// A user as posts, comments, notifications and messages embed them. Images are media ids; the API makes URLs of them.
public struct UserSummary: Sendable, Hashable {
    public let id: UserID
    /// Empty for a deleted account.
    public let handle: String
    public let name: String
    public let major: String
    public let profileImage: MediaID?
    /// A deleted account, which shows nothing but its id.
    public var deleted = false
}

/// A user's profile screen: the summary, the bio, the counts, and how the viewer stands to them.
public struct Profile: Sendable, Hashable {
    public let summary: UserSummary
    public let bio: String
    public let followers: UInt64
    public let following: UInt64
    public let posts: UInt64
    /// Whether the viewer follows this user.
    public let isFollowed: Bool
    public let isMe: Bool
    /// Only for the viewer's own profile.
    public let email: String?
    /// Whether the viewer blocked this user.
    public let isBlocked: Bool
    /// Whether the viewer muted this user.
    public let isMuted: Bool
    /// Whether only accepted followers see the user's posts, tabs and lists.
    public let isPrivate: Bool
    /// Whether the viewer asked to follow this private account, and awaits the answer.
    public let followRequested: Bool
    /// Only for the viewer's own profile: how many of their notifications and conversations they have not read.
    public var unreadNotifications: UInt64?
    public var unreadConversations: UInt64?
}

/// A ``UserSummary`` read in place, lent inside a ``StoredPost`` (see ``StoredText``).
public struct StoredUserSummary: ~Copyable {
    public let id: StoredText
    public let handle: StoredText
    public let name: StoredText
    public let major: StoredText
    /// A media id.
    public let profileImage: StoredText?
    public let deleted: Bool
}

extension UserSummary {
    /// The copy of a summary read in place.
    public init(_ stored: borrowing StoredUserSummary) {
        let image: MediaID? =
            switch stored.profileImage {
            case .some(let image): MediaID(unchecked: image.string)
            case .none: nil
            }
        self.init(
            id: UserID(unchecked: stored.id.string), handle: stored.handle.string, name: stored.name.string,
            major: stored.major.string, profileImage: image, deleted: stored.deleted)
    }

    init(copying summary: SummaryInPlace) {
        self.init(
            id: UserID(unchecked: String(copying: summary.id)), handle: String(copying: summary.handle),
            name: String(copying: summary.name),
            major: String(copying: summary.major),
            profileImage: summary.profileImage.map { MediaID(unchecked: String(copying: $0)) }, deleted: summary.deleted
        )
    }
}

/// Where a summary's bytes are in the snapshot: what queries pass around and remember, and lend out as a
/// ``StoredUserSummary``.
struct SummaryInPlace {
    let id: UnsafeRawBufferPointer
    let handle: UnsafeRawBufferPointer
    let name: UnsafeRawBufferPointer
    let major: UnsafeRawBufferPointer
    let profileImage: UnsafeRawBufferPointer?
    let deleted: Bool
    /// Whether the user's posts are for their accepted followers only: what hides them from others.
    let isPrivate: Bool

    func lent() -> StoredUserSummary {
        StoredUserSummary(
            id: StoredText(id), handle: StoredText(handle), name: StoredText(name), major: StoredText(major),
            profileImage: profileImage.map(StoredText.init), deleted: deleted)
    }
}

/// The user summaries one view has read. A view lives inside one read transaction, so they cannot change.
final class ProfileMemo {
    var summaries: [UserID: UserSummary] = [:]
    /// In place; a page names a few dozen users at most, so a list searched from the start does.
    var inPlace: [SummaryInPlace] = []
}

extension ReadView {
    public func userSummary(_ user: UserID) throws -> UserSummary? {
        if let known = seenProfiles.summaries[user] { return known }
        // Copied while the key it was looked up by lives.
        guard
            let found = try ProjectionKey(user).bytes.withUnsafeBytes({
                try lookUpSummary(of: $0).map(UserSummary.init(copying:))
            })
        else { return nil }
        seenProfiles.summaries[user] = found
        return found
    }

    /// `viewer` decides `isFollowed`, `isMe`, `isBlocked`, `isMuted` and whether the e-mail is shown; nil for a
    /// user who blocked the viewer, as for an unknown one.
    public func profile(_ user: UserID, viewer: UserID?) throws -> Profile? {
        guard let record = try profileRecord(user), !record.deleted else { return nil }
        let isMe = viewer == user
        let block = try viewer.map { try self.block(between: $0, and: user) } ?? (blocked: false, blockedBy: false)
        // A suspended user is hidden as if deleted, from everyone but themselves.
        guard try !block.blockedBy && (isMe || !isSuspended(user)) else { return nil }
        let counts = try profileCounts(of: user)
        return Profile(
            summary: UserSummary(
                id: user, handle: record.handle, name: record.name, major: record.major,
                profileImage: record.profileImage),
            bio: record.bio, followers: counts.followers, following: counts.following, posts: counts.posts,
            isFollowed: try viewer.map { try follows($0, user) } ?? false, isMe: isMe, email: isMe ? record.email : nil,
            isBlocked: block.blocked, isMuted: try viewer.map { try hasMuted($0, user) } ?? false,
            isPrivate: record.isPrivate,
            followRequested: try viewer.map { try hasRequestedToFollow($0, user) } ?? false,
            unreadNotifications: isMe ? try unreadNotifications(of: user) : nil,
            unreadConversations: isMe ? try unreadConversations(of: user) : nil)
    }

    /// The account whose handle `handle` is now (any case); nil when none has it.
    public func user(withHandle handle: String) throws -> UserID? {
        try transaction.withValue(for: Array(handle.lowercased().utf8), in: models.profiles.handles) { value in
            value.map { UserID(unchecked: String(decoding: $0, as: UTF8.self)) }
        }
    }

    /// Whether `user` deleted their account (``profile(_:viewer:)`` is then nil).
    public func isDeletedAccount(_ user: UserID) throws -> Bool {
        try profileRecord(user)?.deleted ?? false
    }

    /// Whether `user` blocked `viewer`, or is suspended: then `user`'s profile and tabs are not there for `viewer`.
    func isBlocked(_ viewer: UserID?, by user: UserID) throws -> Bool {
        guard viewer != user else { return false }
        if try isSuspended(user) { return true }
        guard let viewer else { return false }
        return try block(between: viewer, and: user).blockedBy
    }

    /// Throws ``DomainError/Code/privateAccount`` unless `viewer` may see the posts, tabs and lists of `user` (whose
    /// record is `record`): the account is public, or theirs, or they follow it.
    func requireFollower(_ viewer: UserID?, ofPrivate record: ProfileRecord, _ user: UserID) throws {
        guard try isPrivate(user, record, to: viewer) else { return }
        throw DomainError(.privateAccount, "only the followers of \(user) see their posts, tabs and lists")
    }

    /// Whether `user`, whose record is `record`, is a private account that `viewer` neither is nor follows.
    func isPrivate(_ user: UserID, _ record: ProfileRecord, to viewer: UserID?) throws -> Bool {
        guard record.isPrivate, viewer != user else { return false }
        return try !(viewer.map { try follows($0, user) } ?? false)
    }

    /// Whether `viewer` may not see the posts of the author whose summary is `author`, read in place: a private
    /// account that is not theirs and that they do not follow.
    func privacyHides(_ author: SummaryInPlace, from viewer: UserID?) throws -> Bool {
        guard author.isPrivate else { return false }
        guard let viewer else { return true }
        guard !author.id.elementsEqual(viewer.rawValue.utf8) else { return false }
        return try !follows(viewer, bytes: author.id)
    }

    /// Whether `follower` follows the user whose id is `followee`, a buffer in the snapshot (read in place).
    func follows(_ follower: UserID, bytes followee: UnsafeRawBufferPointer) throws -> Bool {
        var edge = ProjectionKey(follower)
        edge.append(bytes: followee)
        return try transaction.withValue(for: edge.bytes, in: models.profiles.edges) { $0 != nil }
    }

    /// Whether `follower` follows `followee`.
    public func follows(_ follower: UserID, _ followee: UserID) throws -> Bool {
        var edge = ProjectionKey(follower)
        edge.append(followee)
        return try transaction.withValue(for: edge.bytes, in: models.profiles.edges) { $0 != nil }
    }

    /// Whom `user` follows, when they follow no more than `limit`; nil when they follow more.
    public func followees(of user: UserID, upTo limit: Int) throws -> Set<UserID>? {
        // follow-edges: follower, NUL, followee.
        let prefix = ProjectionKey(user).prefix()
        var found = Set<UserID>()
        var overLimit = false
        try transaction.scan(models.profiles.edges, prefix: prefix) { key, _ in
            guard found.count < limit else {
                overLimit = true
                return false
            }
            found.insert(
                UserID(unchecked: ProjectionKey.string(key, from: prefix.count, count: key.count - prefix.count)))
            return true
        }
        return overLimit ? nil : found
    }

    /// The followers tab, newest first, without the users blocked either way by `viewer`; nil for an unknown user, or
    /// one who blocked the viewer.
    public func followers(of user: UserID, viewer: UserID?, page: PageRequest) throws -> Page<UserSummary>? {
        try userTab(models.profiles.followers, of: user, viewer: viewer, page: page)
    }

    /// The following tab, as ``followers(of:viewer:page:)``.
    public func following(of user: UserID, viewer: UserID?, page: PageRequest) throws -> Page<UserSummary>? {
        try userTab(models.profiles.following, of: user, viewer: viewer, page: page)
    }

    // MARK: Joins, for the other models' queries

    func profileRecord(_ user: UserID) throws -> ProfileRecord? {
        try transaction.value(for: ProjectionKey(user).bytes, in: models.profiles.profiles).map(
            ProfileRecord.init(decoding:))
    }

    /// Users named by the read models exist: the log registered them before anything could name them.
    /// The summaries of `users` as they are now, in order, but those deleted or hidden from `viewer` (a block either
    /// way): whom a post or a comment mentions.
    public func visibleSummaries(of users: [UserID], viewer: UserID?) throws -> [UserSummary] {
        try users.compactMap { user in try hides(user, from: viewer) ? nil : userSummary(user) }
    }

    func requireSummary(_ user: UserID) throws -> UserSummary {
        guard let summary = try userSummary(user) else { throw ProjectionError.inconsistent("no profile for \(user)") }
        return summary
    }

    /// The summary of the user whose id is `user`, a buffer in the snapshot, read in place; remembered for the rest
    /// of the view.
    func summaryInPlace(of user: UnsafeRawBufferPointer) throws -> SummaryInPlace? {
        if let known = seenProfiles.inPlace.first(where: { $0.id.starts(withBytes: user) && $0.id.count == user.count })
        {
            return known
        }
        guard let summary = try lookUpSummary(of: user) else { return nil }
        seenProfiles.inPlace.append(summary)
        return summary
    }

    /// The summary of the user whose id is `user`, read in place, its id being `user` itself.
    private func lookUpSummary(of user: UnsafeRawBufferPointer) throws -> SummaryInPlace? {
        try transaction.valueInPlace(for: user, in: models.profiles.profiles).map {
            try ProfileRecord.InPlace($0).summary(of: user)
        }
    }

    private func userTab(_ table: StoreTable, of user: UserID, viewer: UserID?, page: PageRequest) throws -> Page<
        UserSummary
    >? {
        guard let record = try profileRecord(user), !record.deleted, try !isBlocked(viewer, by: user) else {
            return nil
        }
        try requireFollower(viewer, ofPrivate: record, user)
        let prefix = ProjectionKey(user).prefix()
        return try transaction.page(table, prefix: prefix, order: .newestFirst, request: page) { key, _ in
            let listed = ProjectionKey.user(afterPositionIn: key, prefixCount: prefix.count)
            return try hides(listed, from: viewer) ? nil : try requireSummary(listed)
        }
    }
}
