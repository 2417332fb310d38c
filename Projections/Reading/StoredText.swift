/// Text as a snapshot stores it: UTF-8 in the read transaction's pages, read without making a string of it (a feed
/// page's strings and their reference counting were most of its cost). It is noncopyable and only ever lent, inside a
/// post or summary lent to a closure, so it cannot outlive the snapshot whose pages it points into; its bytes are
/// readable only inside ``withUTF8(_:)``'s closure, as a span that cannot leave it either.
public struct StoredText: ~Copyable {
    private let utf8: UnsafeRawBufferPointer

    init(_ utf8: UnsafeRawBufferPointer) { self.utf8 = utf8 }

    /// Calls `body` with the text's UTF-8 bytes.
    public func withUTF8<R>(_ body: (RawSpan) throws -> R) rethrows -> R {
        try body(utf8.bytes)
    }

    /// A copy, as a string.
    public var string: String { String(copying: utf8) }

    /// Whether the text holds `byte`, without a copy.
    public func contains(byte: UInt8) -> Bool { utf8.contains(byte) }
}

extension String {
    /// A string of these UTF-8 bytes.
    init(copying utf8: UnsafeRawBufferPointer) { self.init(decoding: utf8, as: UTF8.self) }
}
