extension String {
    /// Lends `body` the string's UTF-8 bytes where they lie, through its span, which takes no reference: the UTF-8
    /// view's copy retained and released the storage for each chunk it read (`+= text.utf8`, for every string of an
    /// import), and `withUTF8` needs a mutable copy. Where the span is not available, through that view, or a copy.
    @inlinable package func withBorrowedUTF8<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) {
            return utf8Span.span.withUnsafeBufferPointer { body($0) }
        }
        return utf8.withContiguousStorageIfAvailable { body($0) } ?? Array(utf8).withUnsafeBufferPointer(body)
    }
}

extension [UInt8] {
    /// Appends `text`'s UTF-8 bytes, read in place (``Swift/String/withBorrowedUTF8(_:)``).
    @inlinable package mutating func appendUTF8(of text: String) {
        text.withBorrowedUTF8 { append(contentsOf: $0) }
    }
}
