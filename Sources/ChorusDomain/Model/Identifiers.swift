import ChorusLog
import Foundation

/// The ids Chorus makes: 26 characters of lowercase Crockford base32 of a UUIDv7, so they are URL-safe, opaque to
/// clients, and sort by creation time (which keyset pages rely on).
public protocol ChorusIdentifier: Hashable, Sendable, Comparable, CustomStringConvertible {
    var rawValue: String { get }
    init(unchecked rawValue: String)
}

extension ChorusIdentifier {
    /// A new id, later than every id made before it in this process's clock.
    public static func make() -> Self { Self(unchecked: IdentifierCoding.make()) }

    /// The id whose digits spell these 128 bits: for ids made from content, such as a digest of media bytes.
    public init(bits high: UInt64, _ low: UInt64) {
        self.init(unchecked: IdentifierCoding.digits(high: high, low: low))
    }

    /// Checks the form of an id from outside (a request path or body); nil when malformed.
    public init?(_ text: String) {
        guard IdentifierCoding.isWellFormed(text) else { return nil }
        self.init(unchecked: text)
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { rawValue }
}

public struct UserID: ChorusIdentifier {
    public let rawValue: String
    public init(unchecked rawValue: String) { self.rawValue = rawValue }
}

public struct PostID: ChorusIdentifier {
    public let rawValue: String
    public init(unchecked rawValue: String) { self.rawValue = rawValue }
}

public struct CommentID: ChorusIdentifier {
    public let rawValue: String
    public init(unchecked rawValue: String) { self.rawValue = rawValue }
}

public struct MessageID: ChorusIdentifier {
    public let rawValue: String
    public init(unchecked rawValue: String) { self.rawValue = rawValue }
}

/// A chat room many users join (Flash Chat's one room for everyone).
public struct RoomID: ChorusIdentifier {
    public let rawValue: String
    public init(unchecked rawValue: String) { self.rawValue = rawValue }
}

/// A signed-in session; the bearer token is derived from it (see ``SessionTokens``), and the log holds only the id.
public struct SessionID: ChorusIdentifier {
    public let rawValue: String
    public init(unchecked rawValue: String) { self.rawValue = rawValue }
}

/// A password reset asked for; the token sent out is derived from it and its user (see ``SessionTokens``), and the log
/// holds only the id.
public struct ResetID: ChorusIdentifier {
    public let rawValue: String
    public init(unchecked rawValue: String) { self.rawValue = rawValue }
}

public struct ReportID: ChorusIdentifier {
    public let rawValue: String
    public init(unchecked rawValue: String) { self.rawValue = rawValue }
}

/// A phone registered for pushes; the log seals its token, and read models never show the token to a client.
public struct DeviceID: ChorusIdentifier {
    public let rawValue: String
    public init(unchecked rawValue: String) { self.rawValue = rawValue }
}

/// A word or phrase a user muted.
public struct MutedWordID: ChorusIdentifier {
    public let rawValue: String
    public init(unchecked rawValue: String) { self.rawValue = rawValue }
}

public struct MediaID: ChorusIdentifier {
    public let rawValue: String
    public init(unchecked rawValue: String) { self.rawValue = rawValue }
}

enum IdentifierCoding {
    static let length = 26
    private static let alphabet = Array("0123456789abcdefghjkmnpqrstvwxyz".utf8)
    private static let allowed = Set(alphabet)

    static func make() -> String {
        let uuid = TimeOrderedUUID.make()
        return digits(
            high: UInt64(bigEndian: withUnsafeBytes(of: uuid.uuid) { $0.loadUnaligned(as: UInt64.self) }),
            low: UInt64(
                bigEndian: withUnsafeBytes(of: uuid.uuid) { $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self) }))
    }

    /// 128 bits as 26 base32 digits: the first digit carries the top 3 bits.
    static func digits(high: UInt64, low: UInt64) -> String {
        var high = high
        var low = low
        var digits = [UInt8](repeating: 0, count: length)
        for index in stride(from: length - 1, through: 0, by: -1) {
            digits[index] = alphabet[Int(low & 31)]
            low = (low >> 5) | ((high & 31) << 59)
            high >>= 5
        }
        return String(decoding: digits, as: UTF8.self)
    }

    static func isWellFormed(_ text: String) -> Bool {
        text.utf8.count == length && text.utf8.allSatisfy(allowed.contains)
    }
}
