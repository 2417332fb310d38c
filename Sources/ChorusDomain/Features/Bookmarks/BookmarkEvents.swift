import ChorusLog

/// `user` saved `post` for later. Only `user` ever sees their bookmarks: the event is on the user's stream, not the
/// post's, so that nothing that follows a post learns who saved it, and its author is never told.
public struct Bookmarked: Sendable, Hashable {
    public var user: UserID
    public var post: PostID
    public init(user: UserID, post: PostID) {
        self.user = user
        self.post = post
    }
}

/// Takes a bookmark back: by its user, or with their account. `bookmarkedAt`, the position of the ``Bookmarked`` this
/// takes back, so that whoever follows the log can find where that bookmark was listed without looking it up.
public struct Unbookmarked: Sendable, Hashable {
    public var user: UserID
    public var post: PostID
    public var bookmarkedAt: LogPosition
    public init(user: UserID, post: PostID, bookmarkedAt: LogPosition) {
        self.user = user
        self.post = post
        self.bookmarkedAt = bookmarkedAt
    }
}

extension Bookmarked: StoredEvent {
    static let typeName = "Bookmarked"
    static let schemaVersion: UInt16 = 1
    var stream: StreamID { .user(user) }
    var domainEvent: DomainEvent { .bookmarked(self) }

    func encode(to payload: inout PayloadWriter, keys: any PersonalDataKeys) throws {
        payload.write(user)
        payload.write(post)
    }

    init(from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys) throws {
        self.init(user: try payload.read(UserID.self), post: try payload.read(PostID.self))
    }

    func changeState(_ state: DecisionState, at position: LogPosition, in changes: inout DecisionState.ChangeList) {
        changes.put(state.bookmarks, .init(user.rawValue, post.rawValue), since: position)
    }
}

extension Unbookmarked: StoredEvent {
    static let typeName = "Unbookmarked"
    static let schemaVersion: UInt16 = 1
    var stream: StreamID { .user(user) }
    var domainEvent: DomainEvent { .unbookmarked(self) }

    func encode(to payload: inout PayloadWriter, keys: any PersonalDataKeys) throws {
        payload.write(user)
        payload.write(post)
        payload.write(bookmarkedAt.rawValue)
    }

    init(from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys) throws {
        self.init(
            user: try payload.read(UserID.self), post: try payload.read(PostID.self),
            bookmarkedAt: LogPosition(try payload.readUInt64()))
    }

    func changeState(_ state: DecisionState, at position: LogPosition, in changes: inout DecisionState.ChangeList) {
        changes.remove(state.bookmarks, .init(user.rawValue, post.rawValue))
    }
}
