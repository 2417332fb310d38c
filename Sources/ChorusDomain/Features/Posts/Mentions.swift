import ChorusLog

/// Mentions: `@` and a handle (``Handles``, any case), at the start of the text or after a character that cannot be
/// part of a word or a path, and not followed by another `@`: so `bo@example.com`, `/@bo` and `@bo@elsewhere.social`
/// mention no one. A text mentions at most ``maximum`` accounts; later handles stay plain text.
///
/// A mention is resolved when the post or comment is written, to the account that has the handle then
/// (``DecisionState/mentioned(in:by:in:)``): a later change of handle keeps it.
public enum Mentions {
    public static let maximum = 20

    /// The distinct handles `text` names, lowercased, in the order they first appear.
    public static func handles(in text: String) -> [String] {
        // Most texts hold no `@`: those are not walked scalar by scalar (a rebuild reads every post).
        guard text.utf8.contains(UInt8(ascii: "@")) else { return [] }
        var found: [String] = []
        var current: String?
        var previous: Unicode.Scalar?
        func finish(before next: Unicode.Scalar?) {
            guard let handle = current else { return }
            current = nil
            guard next != "@", Handles.lengths.contains(handle.utf8.count), !found.contains(handle) else { return }
            found.append(handle)
        }
        for scalar in text.unicodeScalars {
            if current != nil {
                if let byte = handleByte(scalar) {
                    current!.unicodeScalars.append(Unicode.Scalar(byte))
                    previous = scalar
                    continue
                }
                finish(before: scalar)
            }
            if scalar == "@", previous.map(startsNoMention) != true { current = "" }
            previous = scalar
        }
        finish(before: nil)
        return found
    }

    /// `scalar` as a handle has it (lowercase), if a handle may hold it.
    private static func handleByte(_ scalar: Unicode.Scalar) -> UInt8? {
        guard scalar.isASCII else { return nil }
        let byte = ("A"..."Z").contains(scalar) ? UInt8(scalar.value) + 0x20 : UInt8(scalar.value)
        return Handles.isHandleByte(byte) ? byte : nil
    }

    /// Whether an `@` after `scalar` is part of something else: a word, an address, a path.
    private static func startsNoMention(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "/" || scalar == "@" || Hashtags.isWordScalar(scalar)
    }
}

/// The accounts a post's caption and its text mention, each in the order its handles first appear: kept apart, so that
/// an edit of one leaves the other's as they were resolved.
public struct PostMentions: Sendable, Hashable {
    public enum Field: String, CaseIterable, Sendable { case caption, text }

    public var caption: [UserID]
    public var text: [UserID]

    public init(caption: [UserID], text: [UserID]) { (self.caption, self.text) = (caption, text) }

    public static let none = PostMentions(caption: [], text: [])

    /// Everyone either mentions, once each, the caption's first.
    public var all: [UserID] { caption + text.filter { !caption.contains($0) } }

    static func encode(_ users: [UserID]) -> [UInt8] {
        var writer = PayloadWriter()
        writer.write(mentions: users)
        return writer.bytes
    }

    static func decode(_ bytes: [UInt8]) throws -> [UserID] {
        var reader = PayloadReader(bytes)
        let users = try reader.readMentions()
        try reader.finish()
        return users
    }
}

extension PayloadWriter {
    /// A count, then each id.
    public mutating func write(mentions users: [UserID]) {
        write(UInt8(users.count))
        for user in users { write(user) }
    }
}

extension PayloadReader {
    /// What ``PayloadWriter/write(mentions:)`` wrote.
    public mutating func readMentions() throws -> [UserID] {
        let count = try readByte()
        guard count <= Mentions.maximum else { throw PayloadError.countOutOfRange(count) }
        return try (0..<count).map { _ in try read(UserID.self) }
    }
}

extension PayloadCursor {
    /// What ``PayloadWriter/write(mentions:)`` wrote, copied out.
    public mutating func readMentions() throws -> [UserID] {
        let count = try readByte()
        guard count <= Mentions.maximum else { throw PayloadError.countOutOfRange(count) }
        return try (0..<count).map { _ in UserID(unchecked: String(decoding: try readUTF8(), as: UTF8.self)) }
    }
}
