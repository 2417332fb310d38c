import ChorusDomain
import ChorusLog
import ChorusStorage

/// What user search looks at, per user: the handle, the name and major as searched (NFC, case-folded), and the name's
/// initial consonants (choseong), so that `ㄱㅁㅅ` finds `김민수`; and every user in order of followers, most first, which an
/// empty query lists (the "all users" screen, a new-message picker).
///
/// A query scans every entry (see ``ReadView/searchUsers(_:caller:page:)``): fine for the thousands of users of a
/// campus or a demo; an n-gram index is the step for millions.
///
/// Derived: an entry is the search form of the user's name and major in ``Profiles``' `profiles`, so a build folds
/// each user's final name once instead of every name a user ever had; the order of followers follows
/// ``ProfileCounters``, which is applied first.
struct UserSearch: DerivedReadModel {
    /// user → ``SearchEntry``
    static let entries: StoreTableDefinition = "user-search"
    /// u64 big-endian `UInt64.max` − followers, user → empty: every user, most followed first, then by id
    static let byFollowers: StoreTableDefinition = "users-by-followers"
    static let tables = [entries, byFollowers]

    let entries: StoreTable
    let byFollowers: StoreTable
    let profiles: StoreTable
    let counters: StoreTable

    init(store: KeyValueStore) {
        entries = store.table(Self.entries)
        byFollowers = store.table(Self.byFollowers)
        profiles = store.table(Profiles.profiles)
        counters = store.table(ProfileCounters.counters)
    }

    /// `user`'s key in `users-by-followers` when they have `followers`.
    static func rankKey(_ user: some Sequence<UInt8>, followers: UInt64) -> [UInt8] {
        withUnsafeBytes(of: (UInt64.max - followers).bigEndian, Array.init) + Array(user)
    }

    /// The followers `user` has now, as ``ProfileCounters`` counts them.
    private func followers(of user: some Sequence<UInt8>, in transaction: StoreTransaction) throws -> UInt64 {
        try transaction.counters(Array(user), count: ProfileCounters.counterCount, in: counters)[
            ProfileCounters.followersCounter]
    }

    /// Moves `user` to where their followers count puts them, from where one more (`change` −1) or one fewer (+1)
    /// put them. Nothing moves when the count did not change (a follow that was there already).
    private func rerank(_ user: UserID, after change: Int64, in transaction: StoreTransaction) throws {
        let id = Array(user.rawValue.utf8)
        let now = try followers(of: id, in: transaction)
        let key = Self.rankKey(id, followers: now)
        guard try transaction.withValue(for: key, in: byFollowers, { $0 == nil }) else { return }
        let before = change > 0 ? now &- 1 : now &+ 1
        _ = try transaction.delete(Self.rankKey(id, followers: before), in: byFollowers)
        try transaction.put([], for: key, in: byFollowers)
    }

    func apply(_ event: DomainEvent, at envelope: EventEnvelope, in transaction: StoreTransaction) throws {
        switch event {
        case .userRegistered(let event):
            try transaction.put(
                SearchEntry(name: event.name, major: event.major, handle: event.handle).encoded(),
                for: ProjectionKey(event.user).bytes, in: entries)
            try transaction.put(
                [], for: Self.rankKey(event.user.rawValue.utf8, followers: 0), in: byFollowers)
        case .followed(let event):
            try rerank(event.followee, after: 1, in: transaction)
        case .unfollowed(let event):
            try rerank(event.followee, after: -1, in: transaction)
        case .profileEdited(let event) where event.name != nil || event.major != nil || event.handle != nil:
            let key = ProjectionKey(event.user).bytes
            guard let stored = try transaction.value(for: key, in: entries) else { return }
            let entry = try SearchEntry(decoding: stored)
            let edited = SearchEntry(
                name: event.name ?? entry.name, major: event.major ?? entry.major, handle: event.handle ?? entry.handle)
            try transaction.put(edited.encoded(), for: key, in: entries)
        case .accountDeleted(let event):
            try transaction.delete(ProjectionKey(event.user).bytes, in: entries)
            let id = Array(event.user.rawValue.utf8)
            _ = try transaction.delete(
                Self.rankKey(id, followers: try followers(of: id, in: transaction)), in: byFollowers)
        default:
            break
        }
    }

    func derive(in transaction: StoreTransaction) throws {
        // Users in key order, so that each entry is appended.
        try transaction.scan(profiles) { user, value in
            let profile = try ProfileRecord(decoding: Array(value))
            guard !profile.deleted else { return true }
            try transaction.put(
                SearchEntry(name: profile.name, major: profile.major, handle: profile.handle).encoded(),
                for: Array(user), in: entries, append: true)
            try transaction.put(
                [], for: Self.rankKey(user, followers: try followers(of: user, in: transaction)), in: byFollowers)
            return true
        }
    }
}

extension ReadView {
    /// Users whose handle, name or major contains `query` (NFC, without regard to case; an `@` before a handle left
    /// out); a query made only of Hangul initial
    /// consonants matches names by their syllables' initials (`ㄱㅁㅅ` finds `김민수`). Exact matches come first,
    /// then prefixes, then the rest, each by name; never the caller, nor anyone blocked either way by the caller.
    /// An empty query lists every user instead (``listUsers(caller:page:)``).
    public func searchUsers(_ query: String, caller: UserID?, page: PageRequest) throws -> Page<UserSummary> {
        var folded = SearchText.fold(query)
        if folded.hasPrefix("@") { folded.removeFirst() }
        guard !folded.isEmpty else { return try listUsers(caller: caller, page: page) }
        let byInitials = SearchText.isChoseongOnly(folded)
        var matches: [SearchMatch] = []
        try transaction.scan(models.userSearch.entries) { key, value in
            let id = String(decoding: key, as: UTF8.self)
            guard id != caller?.rawValue, try !hides(UserID(unchecked: id), from: caller) else { return true }
            let entry = try SearchEntry(decoding: Array(value))
            if let rank = entry.rank(for: folded, byInitials: byInitials) {
                matches.append(SearchMatch(rank: rank, name: entry.foldedName, id: id))
            }
            return true
        }
        matches.sort()
        var start = matches.startIndex
        if let cursor = page.cursor {
            guard let after = SearchMatch(cursor: cursor) else { throw ProjectionError.badCursor }
            start = matches.firstIndex { $0 > after } ?? matches.endIndex
        }
        let slice = matches[start...].prefix(page.limit)
        let items = try slice.map { try requireSummary(UserID(unchecked: $0.id)) }
        let hasMore = slice.endIndex < matches.endIndex
        return Page(items: items, nextCursor: hasMore ? slice.last.map { PageCursor(bytes: $0.cursorBytes) } : nil)
    }
}

extension ReadView {
    /// Every user, most followed first (then by id); never the caller, nor anyone blocked either way by the caller, nor
    /// a suspended user.
    public func listUsers(caller: UserID?, page: PageRequest) throws -> Page<UserSummary> {
        var start: [UInt8] = []
        if let cursor = page.cursor {
            guard cursor.bytes.count > 8 else { throw ProjectionError.badCursor }
            // The key after the cursor's: the same bytes and a zero byte, which no id contains.
            start = cursor.bytes + [0]
        }
        var found: [(key: [UInt8], user: UserID)] = []
        var hasMore = false
        try transaction.scan(models.userSearch.byFollowers, from: start) { key, _ in
            let id = key[8...]
            guard !id.elementsEqual(caller?.rawValue.utf8 ?? "".utf8),
                try !hides(bytes: id, from: caller, muting: false)
            else { return true }
            guard found.count < page.limit else {
                hasMore = true
                return false
            }
            found.append((Array(key), UserID(unchecked: String(decoding: id, as: UTF8.self))))
            return true
        }
        return Page(
            items: try found.map { try requireSummary($0.user) },
            nextCursor: hasMore ? found.last.map { PageCursor(bytes: $0.key) } : nil)
    }
}

/// One search hit, in result order: rank, then folded name, then id; also what a search cursor holds.
struct SearchMatch: Comparable {
    let rank: UInt8
    let name: String
    let id: String

    init(rank: UInt8, name: String, id: String) {
        self.rank = rank
        self.name = name
        self.id = id
    }

    init?(cursor: PageCursor) {
        let bytes = cursor.bytes
        guard let rank = bytes.first, let separator = bytes.dropFirst().firstIndex(of: 0) else { return nil }
        self.rank = rank
        name = String(decoding: bytes[1..<separator], as: UTF8.self)
        id = String(decoding: bytes[(separator + 1)...], as: UTF8.self)
    }

    var cursorBytes: [UInt8] { [rank] + Array(name.utf8) + [0] + Array(id.utf8) }

    static func < (lhs: SearchMatch, rhs: SearchMatch) -> Bool {
        (lhs.rank, lhs.name, lhs.id) < (rhs.rank, rhs.name, rhs.id)
    }
}

/// A user as search sees them.
struct SearchEntry: Hashable {
    /// As the profile shows it: kept to rebuild the folded forms after an edit of the other field.
    let name: String
    let major: String
    /// Lowercase already.
    let handle: String
    let foldedName: String
    let foldedMajor: String
    let choseong: String

    init(name: String, major: String, handle: String) {
        self.name = name
        self.major = major
        self.handle = handle
        foldedName = SearchText.fold(name)
        foldedMajor = SearchText.fold(major)
        choseong = SearchText.choseong(foldedName)
    }

    /// Stored with the folded forms, so that a query does not fold every user again.
    func encoded() -> [UInt8] {
        var writer = PayloadWriter()
        for field in [name, major, handle, foldedName, foldedMajor, choseong] { writer.write(field) }
        return writer.bytes
    }

    init(decoding bytes: [UInt8]) throws {
        var reader = PayloadReader(bytes)
        name = try reader.readString()
        major = try reader.readString()
        handle = try reader.readString()
        foldedName = try reader.readString()
        foldedMajor = try reader.readString()
        choseong = try reader.readString()
        try reader.finish()
    }

    /// How well the entry matches a folded query: 0 exact, 1 prefix, 2 elsewhere; nil for no match. A query of
    /// initial consonants only is matched against the name's initials.
    func rank(for query: String, byInitials: Bool) -> UInt8? {
        let fields = byInitials ? [choseong] : [handle, foldedName, foldedMajor]
        if fields.contains(query) { return 0 }
        if fields.contains(where: { $0.hasPrefix(query) }) { return 1 }
        if fields.contains(where: { $0.contains(query) }) { return 2 }
        return nil
    }
}

/// How search compares text.
enum SearchText {
    /// NFC, trimmed, lowercase.
    static func fold(_ text: String) -> String { normalized(text).lowercased() }

    private static let initials: [Character] = Array("ㄱㄲㄴㄷㄸㄹㅁㅂㅃㅅㅆㅇㅈㅉㅊㅋㅌㅍㅎ")
    private static let initialSet = Set(initials)

    /// Each Hangul syllable replaced by its initial consonant; other characters kept.
    static func choseong(_ text: String) -> String {
        String(
            text.unicodeScalars.map { scalar -> Character in
                guard (0xAC00...0xD7A3).contains(scalar.value) else { return Character(scalar) }
                return initials[Int((scalar.value - 0xAC00) / 588)]
            })
    }

    /// Whether `query` is made only of Hangul initial consonants (compatibility jamo).
    static func isChoseongOnly(_ query: String) -> Bool {
        !query.isEmpty && query.allSatisfy(initialSet.contains)
    }
}
