import ChorusDomain
import ChorusLog
import ChorusStorage

/// What user search looks at, per user: the name and major as searched (NFC, case-folded), and the name's initial
/// consonants (choseong), so that `ㄱㅁㅅ` finds `김민수`.
///
/// A query scans every entry (see ``ReadView/searchUsers(_:caller:page:)``): fine for the thousands of users of a
/// campus or a demo; an n-gram index is the step for millions.
///
/// Derived: an entry is the search form of the user's name and major in ``Profiles``' `profiles`, so a build folds
/// each user's final name once instead of every name a user ever had.
struct UserSearch: DerivedReadModel {
    /// user → ``SearchEntry``
    static let entries: StoreTableDefinition = "user-search"
    static let tables = [entries]

    let entries: StoreTable
    let profiles: StoreTable

    init(store: KeyValueStore) {
        entries = store.table(Self.entries)
        profiles = store.table(Profiles.profiles)
    }

    func apply(_ event: DomainEvent, at envelope: EventEnvelope, in transaction: StoreTransaction) throws {
        switch event {
        case .userRegistered(let event):
            try transaction.put(
                SearchEntry(name: event.name, major: event.major).encoded(), for: ProjectionKey(event.user).bytes,
                in: entries)
        case .profileEdited(let event) where event.name != nil || event.major != nil:
            let key = ProjectionKey(event.user).bytes
            guard let stored = try transaction.value(for: key, in: entries) else { return }
            let entry = try SearchEntry(decoding: stored)
            let edited = SearchEntry(name: event.name ?? entry.name, major: event.major ?? entry.major)
            try transaction.put(edited.encoded(), for: key, in: entries)
        case .accountDeleted(let event):
            try transaction.delete(ProjectionKey(event.user).bytes, in: entries)
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
                SearchEntry(name: profile.name, major: profile.major).encoded(), for: Array(user), in: entries,
                append: true)
            return true
        }
    }
}

extension ReadView {
    /// Users whose name or major contains `query` (NFC, without regard to case); a query made only of Hangul initial
    /// consonants matches names by their syllables' initials (`ㄱㅁㅅ` finds `김민수`). Exact matches come first,
    /// then prefixes, then the rest, each by name; never the caller, nor anyone blocked either way by the caller.
    public func searchUsers(_ query: String, caller: UserID?, page: PageRequest) throws -> Page<UserSummary> {
        let folded = SearchText.fold(query)
        guard !folded.isEmpty else { return Page(items: [], nextCursor: nil) }
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
    let foldedName: String
    let foldedMajor: String
    let choseong: String

    init(name: String, major: String) {
        self.name = name
        self.major = major
        foldedName = SearchText.fold(name)
        foldedMajor = SearchText.fold(major)
        choseong = SearchText.choseong(foldedName)
    }

    /// Stored with the folded forms, so that a query does not fold every user again.
    func encoded() -> [UInt8] {
        var writer = PayloadWriter()
        for field in [name, major, foldedName, foldedMajor, choseong] { writer.write(field) }
        return writer.bytes
    }

    init(decoding bytes: [UInt8]) throws {
        var reader = PayloadReader(bytes)
        name = try reader.readString()
        major = try reader.readString()
        foldedName = try reader.readString()
        foldedMajor = try reader.readString()
        choseong = try reader.readString()
        try reader.finish()
    }

    /// How well the entry matches a folded query: 0 exact, 1 prefix, 2 elsewhere; nil for no match. A query of
    /// initial consonants only is matched against the name's initials.
    func rank(for query: String, byInitials: Bool) -> UInt8? {
        let fields = byInitials ? [choseong] : [foldedName, foldedMajor]
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
