import ChorusLog
import Foundation

/// Which end of a list comes first.
public enum SortOrder: Sendable {
    case newestFirst
    case oldestFirst
}

/// Where a page starts: opaque to clients, a log position inside. A page never repeats or skips an item because of
/// writes between two requests, since it continues strictly past the last item's position.
public struct PageCursor: Sendable, Hashable, CustomStringConvertible {
    let position: LogPosition

    /// Reads a cursor from a client; nil when it is not one of ours.
    public init?(_ text: String) {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64.append("=") }
        guard text.count == 11, let data = Data(base64Encoded: base64), data.count == 8 else { return nil }
        position = LogPosition(data.withUnsafeBytes { UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)) })
    }

    init(position: LogPosition) { self.position = position }

    public var description: String {
        withUnsafeBytes(of: position.rawValue.bigEndian) { Data($0) }.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
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

extension StoreTransaction {
    /// A keyset page of the entries whose keys are `prefix`, a position, then anything; `item` turns an entry into an
    /// item (nil skips it).
    func page<Item>(
        _ table: StoreTable, prefix: [UInt8], order: SortOrder, request: PageRequest,
        _ item: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Item?
    ) throws -> Page<Item> {
        var items: [Item] = []
        var lastPosition: LogPosition?
        var hasMore = false
        let start: [UInt8]
        switch (order, request.cursor) {
        case (.newestFirst, nil): start = prefix + [0xFF]
        case (.newestFirst, let cursor?): start = prefix + ProjectionKey.position(cursor.position)
        case (.oldestFirst, nil): start = prefix
        case (.oldestFirst, let cursor?): start = prefix + ProjectionKey.position(cursor.position.next)
        }
        try scan(table, from: start, direction: order == .newestFirst ? .backward : .forward) { key, value in
            guard key.starts(with: prefix), key.count >= prefix.count + 8 else { return false }
            let position = ProjectionKey.position(in: key, at: prefix.count)
            if let cursor = request.cursor {
                let past = order == .newestFirst ? position < cursor.position : position > cursor.position
                guard past else { return true }
            }
            guard items.count < request.limit else {
                hasMore = true
                return false
            }
            if let found = try item(key, value) {
                items.append(found)
                lastPosition = position
            }
            return true
        }
        return Page(items: items, nextCursor: hasMore ? lastPosition.map(PageCursor.init(position:)) : nil)
    }
}
