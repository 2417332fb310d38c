import Crypto
import Foundation

/// The field limits of the HTTP contract (openapi.yaml), in characters (grapheme clusters) after NFC normalisation and
/// trimming, except passwords, which are bytes (bcrypt reads at most 72).
public enum FieldLimits {
    public static let email = 254
    public static let password = 6...72
    public static let name = 50
    public static let major = 50
    public static let bio = 300
    public static let caption = 2200
    public static let postText = 280
    public static let comment = 1000
    public static let message = 2000
    public static let roomName = 100
}

/// Normalises text as Chorus stores it: Unicode NFC, leading and trailing white space removed.
public func normalized(_ text: String) -> String {
    text.precomposedStringWithCanonicalMapping.trimmingCharacters(in: .whitespacesAndNewlines)
}

public enum Validate {
    /// Optional free text (major, bio, caption): may end up empty.
    static func optionalText(_ text: String?, field: String, limit: Int) throws(DomainError) -> String {
        let text = normalized(text ?? "")
        guard text.count <= limit else {
            throw DomainError(.textTooLong, "\(field) is \(text.count) characters; the limit is \(limit)")
        }
        return text
    }

    /// Text that must say something (post text when alone, comments, messages).
    static func requiredText(_ text: String, field: String, limit: Int) throws(DomainError) -> String {
        let text = try optionalText(text, field: field, limit: limit)
        guard !text.isEmpty else { throw DomainError(.emptyText, "\(field) is empty") }
        return text
    }

    /// A profile field (major, bio): may be empty; too long is an invalid field, as the contract puts it.
    static func profileField(_ text: String?, field: String, limit: Int) throws(DomainError) -> String {
        let text = normalized(text ?? "")
        guard text.count <= limit else {
            throw DomainError(.invalidField, "\(field) must be at most \(limit) characters")
        }
        return text
    }

    /// A display name: 1 to 50 characters.
    static func name(_ name: String) throws(DomainError) -> String {
        let name = normalized(name)
        guard !name.isEmpty else { throw DomainError(.invalidField, "name must not be empty") }
        guard name.count <= FieldLimits.name else {
            throw DomainError(.invalidField, "name must be at most \(FieldLimits.name) characters")
        }
        guard !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw DomainError(.invalidField, "name must not contain control characters")
        }
        return name
    }

    /// An e-mail of the usual `local@domain.tld` form, at most 254 characters and, as RFC 5321 has it, 254 bytes (it
    /// is a key of the decision state, whose keys LMDB caps at 511 bytes).
    static func email(_ email: String) throws(DomainError) -> String {
        let email = normalized(email)
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        let valid =
            email.utf8.count <= FieldLimits.email && parts.count == 2 && !parts[0].isEmpty
            && !email.contains(where: { $0.isWhitespace || $0.isNewline })
            && { () -> Bool in
                let labels = parts[1].split(separator: ".", omittingEmptySubsequences: false)
                return labels.count >= 2 && labels.allSatisfy { !$0.isEmpty } && (labels.last?.count ?? 0) >= 2
            }()
        guard valid else { throw DomainError(.invalidEmail, "\"\(email)\" is not an e-mail address") }
        return email
    }

    /// The key under which an e-mail is unique: a SHA-256 of its lowercase form, in hex. The decision state and the
    /// log's actors keep this, never the e-mail, which is personal data and lives only sealed in the events.
    public static func emailKey(_ email: String) -> String {
        var hasher = SHA256()
        hasher.update(data: emailKeyPrefix)
        var email = email
        let isASCII = email.withUTF8 { utf8 in
            guard utf8.allSatisfy({ $0 < 0x80 }) else { return false }
            // Lowercased by byte on the stack, as `lowercased()` lowercases ASCII: an import keys 125,000 e-mails, and
            // the strings and arrays made for each were a tenth of its allocations.
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: utf8.count) { lower in
                for (offset, byte) in utf8.enumerated() {
                    lower[offset] = (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
                }
                hasher.update(bufferPointer: UnsafeRawBufferPointer(lower))
            }
            return true
        }
        if !isASCII { hasher.update(data: Array(email.lowercased().utf8)) }
        let digest = hasher.finalize()
        // Lowercase hex by hand: String(format:) took about 100 µs per key on Linux, a twentieth of a log import.
        func digit(_ nibble: UInt8) -> UInt8 {
            nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
        }
        // From the digest's bytes in place: iterated, a digest makes an array of them first.
        return digest.withUnsafeBytes { digest in
            String(unsafeUninitializedCapacity: 2 * digest.count) { hex in
                for (offset, byte) in digest.enumerated() {
                    (hex[2 * offset], hex[2 * offset + 1]) = (digit(byte >> 4), digit(byte & 0x0F))
                }
                return 2 * digest.count
            }
        }
    }

    private static let emailKeyPrefix = Array("chorus e-mail\u{0}".utf8)

    static func password(_ password: String) throws(DomainError) {
        guard FieldLimits.password.contains(password.utf8.count) else {
            throw DomainError(
                .weakPassword,
                "a password must be \(FieldLimits.password.lowerBound) to \(FieldLimits.password.upperBound) bytes")
        }
    }
}
