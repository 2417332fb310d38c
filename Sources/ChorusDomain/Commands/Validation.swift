import Crypto
import Foundation

/// The field limits of the HTTP contract (openapi.yaml), in characters (grapheme clusters) after NFC normalisation and
/// trimming, except passwords, which are bytes (bcrypt reads at most 72). Each text field also holds at most
/// ``scalarsPerCharacter`` Unicode scalars per character of its limit: a grapheme cluster has no length of its own, and
/// one letter under 32,000 combining marks is one character of 64 KB.
public enum FieldLimits {
    public static let email = 254
    public static let password = 6...72
    public static let name = 50
    public static let major = 50
    public static let bio = 300
    public static let caption = 2200
    public static let postText = 280
    /// An image's alt text.
    public static let alt = 1500
    public static let comment = 1000
    public static let message = 2000
    public static let roomName = 100
    /// Text in any script stays well below: Korean in NFC is one scalar a character, Devanagari about two, the longest
    /// emoji sequences (a family with skin tones) eleven, and a field full of them is not text anyone writes.
    public static let scalarsPerCharacter = 4
}

/// Normalises text as Chorus stores it: Unicode NFC, leading and trailing white space removed. Made stream-safe first
/// (``streamSafe(_:)``), so that it takes time in proportion to the text, whatever the text.
public func normalized(_ text: String) -> String {
    streamSafe(text).precomposedStringWithCanonicalMapping.trimmingCharacters(in: .whitespacesAndNewlines)
}

/// `text` in Unicode's Stream-Safe Text Format (UAX #15): a combining grapheme joiner (U+034F) after every 30 marks in
/// a row. Normalisation sorts each run of marks, in time that grows with the square of the run: one letter under
/// 32,000 alternating marks (64 KB, a body the server takes) took two seconds of a core, in a login's e-mail or a
/// search's query as much as in a post. No text of any language comes near 30 marks on one character.
func streamSafe(_ text: String) -> String {
    func isMark(_ scalar: Unicode.Scalar) -> Bool {
        let properties = scalar.properties
        if properties.canonicalCombiningClass != .notReordered { return true }
        switch properties.generalCategory {
        // Some marks of class 0 decompose into marks that are not (U+0F73 into U+0F71 U+0F72).
        case .nonspacingMark, .spacingMark, .enclosingMark: return true
        default: return false
        }
    }
    var run = 0
    guard
        text.unicodeScalars.contains(where: { scalar in
            run = isMark(scalar) ? run + 1 : 0
            return run > 30
        })
    else { return text }
    var safe = String.UnicodeScalarView()
    run = 0
    for scalar in text.unicodeScalars {
        if isMark(scalar) {
            if run == 30 {
                safe.append("\u{034F}")
                run = 0
            }
            run += 1
        } else {
            run = 0
        }
        safe.append(scalar)
    }
    return String(safe)
}

public enum Validate {
    /// Which control characters a text field takes.
    enum Layout {
        /// One line (names, majors, room names): none.
        case line
        /// Paragraphs (posts, comments, messages, bios): newline and tab, no other. Escape, NUL and the rest reach
        /// operators' terminals and other programs as commands, not text.
        case paragraphs
    }

    /// A text field, normalised (``normalized(_:)``): at most `limit` characters and `limit` ×
    /// ``FieldLimits/scalarsPerCharacter`` Unicode scalars (else `tooLong`); no control character `layout` does not
    /// take, and something visible unless empty (else `invalid`).
    static func text(
        _ text: String, field: String, limit: Int, layout: Layout, tooLong: DomainError.Code = .textTooLong,
        invalid: DomainError.Code = .invalidField
    ) throws(DomainError) -> String {
        let text = normalized(text)
        // Scalars first: counting characters walks grapheme breaks, which is the slower count of a hostile text.
        let scalars = text.unicodeScalars.count
        let scalarLimit = limit * FieldLimits.scalarsPerCharacter
        guard scalars <= scalarLimit, text.count <= limit else {
            let characters = text.count
            throw DomainError(
                tooLong,
                characters > limit
                    ? "\(field) is \(characters) characters; the limit is \(limit)"
                    : "\(field) is \(scalars) Unicode scalars (letters with their marks); the limit is \(scalarLimit)")
        }
        if let control = text.unicodeScalars.first(where: { isRefused($0, layout) }) {
            let allowed = layout == .paragraphs ? "; only newline and tab are allowed" : ""
            throw DomainError(
                .invalidField, "\(field) must not contain the control character \(codePoint(control))\(allowed)")
        }
        guard text.isEmpty || hasVisibleCharacter(text) else {
            throw DomainError(invalid, "\(field) shows nothing: it has only invisible or formatting characters")
        }
        return text
    }

    /// Optional free text (caption, report details): may end up empty.
    static func optionalText(_ text: String?, field: String, limit: Int) throws(DomainError) -> String {
        try Self.text(text ?? "", field: field, limit: limit, layout: .paragraphs, invalid: .emptyText)
    }

    /// A post's images: at most ``PostCreated/maximumImages``, none twice, each alt text at most ``FieldLimits/alt``
    /// (an empty one is none).
    static func postImages(_ media: [PostImage]) throws(DomainError) -> [PostImage] {
        guard media.count <= PostCreated.maximumImages else {
            throw DomainError(
                .invalidField, "a post has at most \(PostCreated.maximumImages) images, not \(media.count)")
        }
        guard Set(media.map(\.id)).count == media.count else {
            throw DomainError(.invalidField, "a post shows each image once")
        }
        var checked: [PostImage] = []
        for image in media {
            let alt = try optionalText(image.alt, field: "alt", limit: FieldLimits.alt)
            checked.append(PostImage(id: image.id, alt: alt.isEmpty ? nil : alt))
        }
        return checked
    }

    /// Text that must say something (post text when alone, comments, messages).
    static func requiredText(_ text: String, field: String, limit: Int) throws(DomainError) -> String {
        let text = try optionalText(text, field: field, limit: limit)
        guard !text.isEmpty else { throw DomainError(.emptyText, "\(field) is empty") }
        return text
    }

    /// A profile field (major, bio): may be empty; too long is an invalid field, as the contract puts it.
    static func profileField(_ text: String?, field: String, limit: Int, layout: Layout) throws(DomainError) -> String {
        try Self.text(text ?? "", field: field, limit: limit, layout: layout, tooLong: .invalidField)
    }

    /// A display name: 1 to 50 characters on one line, something visible, and no character that reorders the text
    /// around it.
    static func name(_ name: String) throws(DomainError) -> String {
        let name = try title(name, field: "name", limit: FieldLimits.name, tooLong: .invalidField)
        guard !name.isEmpty else { throw DomainError(.invalidField, "name must not be empty") }
        return name
    }

    /// A name others see beside what they trust (a user's, a room's): one line, something visible, and none of the
    /// characters that override or isolate the direction of the text around them (U+202A–U+202E, U+2066–U+2069),
    /// with which a name can make the text after it read backwards. May be empty: the caller says whether it may.
    static func title(
        _ text: String, field: String, limit: Int, tooLong: DomainError.Code = .textTooLong,
        invalid: DomainError.Code = .invalidField
    ) throws(DomainError) -> String {
        let text = try Self.text(text, field: field, limit: limit, layout: .line, tooLong: tooLong, invalid: invalid)
        if let control = text.unicodeScalars.first(where: isDirectionControl) {
            throw DomainError(.invalidField, "\(field) must not contain the direction control \(codePoint(control))")
        }
        return text
    }

    /// Whether `text` has a character that shows: a letter, digit, punctuation or symbol that is not one of the
    /// characters meant to be ignored when shown (U+3164 HANGUL FILLER is a letter of those) nor the blank braille
    /// pattern. Spaces, marks alone and formatting characters show nothing.
    public static func hasVisibleCharacter(_ text: String) -> Bool {
        text.unicodeScalars.contains { scalar in
            let properties = scalar.properties
            guard !properties.isDefaultIgnorableCodePoint, scalar != "\u{2800}" else { return false }
            switch properties.generalCategory {
            case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
                .decimalNumber, .letterNumber, .otherNumber,
                .connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation, .initialPunctuation,
                .finalPunctuation, .otherPunctuation,
                .mathSymbol, .currencySymbol, .modifierSymbol, .otherSymbol:
                return true
            default:
                return false
            }
        }
    }

    /// A control character (C0, DEL or C1) that `layout` does not take.
    private static func isRefused(_ scalar: Unicode.Scalar, _ layout: Layout) -> Bool {
        guard scalar.properties.generalCategory == .control else { return false }
        return layout == .line || (scalar != "\n" && scalar != "\t")
    }

    private static func isDirectionControl(_ scalar: Unicode.Scalar) -> Bool {
        (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
    }

    /// `U+001B`.
    private static func codePoint(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    /// An e-mail of the usual `local@domain.tld` form, at most 254 characters and, as RFC 5321 has it, 254 bytes (it
    /// is a key of the decision state, whose keys LMDB caps at 511 bytes). No white space, control or invisible
    /// character anywhere: an address with a zero-width space in it reads as another's in every list an admin sees.
    static func email(_ email: String) throws(DomainError) -> String {
        let email = normalized(email)
        if let hidden = email.unicodeScalars.first(where: isHiddenInEmail) {
            throw DomainError(
                .invalidEmail,
                "an e-mail address must not contain white space or \(codePoint(hidden)), which shows nothing")
        }
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        let valid =
            email.utf8.count <= FieldLimits.email && parts.count == 2 && !parts[0].isEmpty
            && { () -> Bool in
                let labels = parts[1].split(separator: ".", omittingEmptySubsequences: false)
                return labels.count >= 2 && labels.allSatisfy { !$0.isEmpty } && (labels.last?.count ?? 0) >= 2
            }()
        guard valid else { throw DomainError(.invalidEmail, "\"\(email)\" is not an e-mail address") }
        return email
    }

    private static func isHiddenInEmail(_ scalar: Unicode.Scalar) -> Bool {
        let properties = scalar.properties
        return properties.isWhitespace || properties.isDefaultIgnorableCodePoint
            || properties.generalCategory == .control || properties.generalCategory == .format
    }

    /// The key an account is looked up under by the e-mail a person typed (a login, a reset): ``emailKey(_:)`` of the
    /// e-mail normalised. Every limit on tries per account keys on this too, so that no spelling of one account's
    /// e-mail (other case, white space around it) counts as another account.
    public static func accountKey(forEmail typed: String) -> String {
        emailKey(normalized(typed))
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
        return hex(hasher.finalize())
    }

    /// A SHA-256 digest in lowercase hex, by hand: String(format:) is slow on Linux, and a log import makes a key for
    /// every account.
    static func hex(_ digest: SHA256.Digest) -> String {
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
