/// A list the server answers in pages (`?cursor=`), as one sequence of its items: iterating it asks for the next page
/// only when the items of the last are used up, so `for try await post in client.homeFeed() { … break }` reads no
/// more than it shows.
public struct Pages<Item: Sendable>: AsyncSequence, Sendable {
    public typealias Element = Item
    /// One page: its items and the cursor of the next, nil at the end.
    public typealias Fetch = @Sendable (_ cursor: String?) async throws -> (items: [Item], nextCursor: String?)

    private let fetch: Fetch

    public init(_ fetch: @escaping Fetch) { self.fetch = fetch }

    /// The first page as the server answers it, with the cursor of the next.
    public func firstPage() async throws -> (items: [Item], nextCursor: String?) { try await fetch(nil) }

    /// Up to `count` items from the start.
    public func first(_ count: Int) async throws -> [Item] {
        var items: [Item] = []
        for try await item in self {
            guard items.count < count else { break }
            items.append(item)
        }
        return items
    }

    public func makeAsyncIterator() -> Iterator { Iterator(fetch: fetch) }

    public struct Iterator: AsyncIteratorProtocol {
        let fetch: Fetch
        private var buffer: [Item] = []
        private var index = 0
        private var cursor: String?
        private var finished = false

        init(fetch: @escaping Fetch) { self.fetch = fetch }

        public mutating func next() async throws -> Item? {
            while index == buffer.count {
                guard !finished else { return nil }
                let page = try await fetch(cursor)
                (buffer, index, cursor) = (page.items, 0, page.nextCursor)
                finished = page.nextCursor == nil
            }
            defer { index += 1 }
            return buffer[index]
        }
    }
}
