/// The name of a stream, for example `user-42`. Events of one stream carry gapless versions from 1.
public struct StreamID: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// Stream ids are stored inside LMDB keys, which are at most 511 bytes.
    public static let maximumUTF8Length = 200

    public let rawValue: String

    /// Checks that `rawValue` is 1…200 UTF-8 bytes without NUL (NUL separates the stream from the version in keys).
    public init(_ rawValue: String) throws(EventLogError) {
        let length = rawValue.utf8.count
        guard length > 0, length <= Self.maximumUTF8Length else {
            throw .invalidAppend("a stream id must be 1 to \(Self.maximumUTF8Length) UTF-8 bytes, not \(length)")
        }
        // Through the bytes where they lie, not the UTF-8 view's iterator a byte at a time: every append checks.
        let holdsNUL = rawValue.utf8.withContiguousStorageIfAvailable { $0.contains(0) } ?? rawValue.utf8.contains(0)
        guard !holdsNUL else {
            throw .invalidAppend("a stream id must not contain NUL")
        }
        self.rawValue = rawValue
    }

    /// For ids read back from the log, which were checked when appended.
    init(unchecked rawValue: String) { self.rawValue = rawValue }

    /// For literal ids in code; an invalid literal is a programming error.
    public init(stringLiteral value: String) {
        do { try self.init(value) } catch { preconditionFailure("invalid stream id literal: \(error.message)") }
    }

    public var description: String { rawValue }
}
