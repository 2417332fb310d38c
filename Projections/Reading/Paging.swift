import ChorusDomain
import ChorusLog
import ChorusStorage
import Foundation

/// Which end of a list comes first.
public enum SortOrder: Sendable {
    case newestFirst
    case oldestFirst
}

/// Where a page starts: opaque to clients, URL-safe base64 inside. Most lists continue strictly past the last item's
/// log position, so a page never repeats or skips an item because of writes between two requests; search continues
/// past the last item's rank, name and id.
public struct PageCursor: Sendable, Hashable, CustomStringConvertible {
    static let maximumSize = 512

    let bytes: [UInt8]

    /// Reads a cursor from a client; nil when it cannot be one of ours.
    public init?(_ text: String) {
        guard !text.isEmpty, text.utf8.count <= Self.maximumSize * 2, let bytes = Base64URL.decode(text),
            !bytes.isEmpty, bytes.count <= Self.maximumSize
        else { return nil }
        self.bytes = bytes
    }

    init(bytes: [UInt8]) { self.bytes = bytes }

    /// The cursor of the list item at `position`: a page from it starts just past that item.
    public init(position: LogPosition) { self.init(bytes: ProjectionKey.position(position)) }

    /// The cursor of the list item whose id is `id`, for lists kept in id order (ids sort by creation).
    public init(id: some ChorusIdentifier) { self.init(bytes: Array(id.rawValue.utf8)) }

    /// The id of an id cursor; nil for any other.
    public func id<ID: ChorusIdentifier>(as type: ID.Type) -> ID? {
        ID(String(decoding: bytes, as: UTF8.self))
    }

    /// The position of a position cursor.
    public var position: LogPosition? {
        guard bytes.count == 8 else { return nil }
        return bytes.withUnsafeBytes { LogPosition(UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self))) }
    }

    public var description: String { Base64URL.encode(bytes) }
}

/// How many items, from where.
public struct PageRequest: Sendable, Hashable {
    public static let limits = 1...100

    public var limit: Int
    public var cursor: PageCursor?

    public init(limit: Int = 20, cursor: PageCursor? = nil) {
        self.limit = min(max(limit, Self.limits.lowerBound), Self.limits.upperBound)
        self.cursor = cursor
    }
}

/// One keyset page: items, and the cursor of the next page when there is one.
public struct Page<Item> {
    public let items: [Item]
    public let nextCursor: PageCursor?

    public init(items: [Item], nextCursor: PageCursor?) {
        self.items = items
        self.nextCursor = nextCursor
    }

    /// The page of `all` (in list order, each with its id) that `request` asks for: from just past its cursor's id,
    /// `limit` items.
    public init<ID: ChorusIdentifier>(
        of all: [(id: ID, item: Item)], request: PageRequest, newestFirst: Bool = true
    ) {
        let start = request.cursor?.id(as: ID.self)
        let rest = all.drop { entry in start.map { newestFirst ? entry.id >= $0 : entry.id <= $0 } ?? false }
        let page = rest.prefix(request.limit)
        self.init(
            items: page.map(\.item),
            nextCursor: rest.count > page.count ? page.last.map { PageCursor(id: $0.id) } : nil)
    }

    /// The same page with each item transformed.
    public func map<Other>(_ transform: (Item) throws -> Other) rethrows -> Page<Other> {
        Page<Other>(items: try items.map(transform), nextCursor: nextCursor)
    }
}

extension Page: Sendable where Item: Sendable {}
extension Page: Equatable where Item: Equatable {}
extension Page: Hashable where Item: Hashable {}

/// What is left of a page read in place once its items have been lent out one by one: where the next page starts.
public struct PageEnd: Sendable, Hashable {
    public let nextCursor: PageCursor?
}

extension StoreTransaction {
    /// Walks a keyset page of the entries whose keys are `prefix`, a position, then anything; `item` gets each entry
    /// and says whether it made an item of it (false skips it).
    func forEachInPage(
        _ table: StoreTable, prefix: [UInt8], order: SortOrder, request: PageRequest,
        _ item: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws -> PageEnd {
        var count = 0
        var lastPosition: LogPosition?
        var hasMore = false
        let after: LogPosition?
        if let cursor = request.cursor {
            guard let position = cursor.position else { throw ProjectionError.badCursor }
            after = position
        } else {
            after = nil
        }
        let start: [UInt8]
        switch (order, after) {
        case (.newestFirst, nil): start = prefix + [0xFF]
        case (.newestFirst, let after?): start = prefix + ProjectionKey.position(after)
        case (.oldestFirst, nil): start = prefix
        case (.oldestFirst, let after?): start = prefix + ProjectionKey.position(after.next)
        }
        try scan(table, within: prefix, from: start, direction: order == .newestFirst ? .backward : .forward) {
            key, value in
            guard key.starts(with: prefix), key.count >= prefix.count + 8 else { return false }
            let position = ProjectionKey.position(in: key, at: prefix.count)
            if let after {
                let past = order == .newestFirst ? position < after : position > after
                guard past else { return true }
            }
            guard count < request.limit else {
                hasMore = true
                return false
            }
            if try item(key, value) {
                count += 1
                lastPosition = position
            }
            return true
        }
        return PageEnd(nextCursor: hasMore ? lastPosition.map(PageCursor.init(position:)) : nil)
    }

    /// A keyset page (see ``forEachInPage(_:prefix:order:request:_:)``); `item` turns an entry into an item (nil skips
    /// it).
    func page<Item>(
        _ table: StoreTable, prefix: [UInt8], order: SortOrder, request: PageRequest,
        _ item: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Item?
    ) throws -> Page<Item> {
        var items: [Item] = []
        items.reserveCapacity(request.limit)
        let end = try forEachInPage(table, prefix: prefix, order: order, request: request) { key, value in
            guard let found = try item(key, value) else { return false }
            items.append(found)
            return true
        }
        return Page(items: items, nextCursor: end.nextCursor)
    }
}

extension PositionChunks {
    /// Walks a keyset page, newest first, of `owner`'s list of positions; `item` gets each position and says whether
    /// it made an item of it (false skips it).
    func forEachInPage(
        of owner: some ChorusIdentifier, request: PageRequest, in transaction: StoreTransaction,
        _ item: (LogPosition) throws -> Bool
    ) throws -> PageEnd {
        var count = 0
        var lastPosition: LogPosition?
        var hasMore = false
        var before: LogPosition?
        if let cursor = request.cursor {
            guard let after = cursor.position else { throw ProjectionError.badCursor }
            before = after
        }
        try forEachNewestFirst(of: Array(owner.rawValue.utf8), before: before, in: transaction) { position in
            guard count < request.limit else {
                hasMore = true
                return false
            }
            if try item(position) {
                count += 1
                lastPosition = position
            }
            return true
        }
        return PageEnd(nextCursor: hasMore ? lastPosition.map(PageCursor.init(position:)) : nil)
    }
}

/// Walks a keyset page, newest first, of several sorted lists of positions read as one (a Following feed's own and
/// the held-back posts it merges): `newest(list, before, count)` gives up to `count` positions of list number `list`,
/// newest first, below `before` if given; `item` gets each position in turn and says whether it made an item of it.
///
/// Reads each list a batch at a time: the positions down to the oldest of a list's batch that came back full are
/// complete in every list, so they go out in order before the next batches are read below them.
func forEachInMergedPage(
    lists: Int, request: PageRequest, _ item: (LogPosition) throws -> Bool,
    newest: (_ list: Int, _ before: LogPosition?, _ count: Int) throws -> [LogPosition]
) throws -> PageEnd {
    var before: LogPosition?
    if let cursor = request.cursor {
        guard let after = cursor.position else { throw ProjectionError.badCursor }
        before = after
    }
    var count = 0
    var lastPosition: LogPosition?
    // One more than a page, as a page usually needs no more; then four times as much each time.
    var batch = request.limit + 1
    while true {
        var merged: [LogPosition] = []
        var complete: LogPosition?
        for list in 0..<lists {
            let positions = try newest(list, before, batch)
            merged += positions
            if positions.count == batch, let oldest = positions.last { complete = max(complete ?? oldest, oldest) }
        }
        merged.sort(by: >)
        for position in merged {
            if let complete, position < complete { break }
            guard count < request.limit else {
                return PageEnd(nextCursor: lastPosition.map(PageCursor.init(position:)))
            }
            if try item(position) {
                count += 1
                lastPosition = position
            }
        }
        guard let complete else { return PageEnd(nextCursor: nil) }
        before = complete
        batch = min(batch * 4, 4_096)
    }
}
