/// Hashtags: `#` and a run of letters of any script, digits and `_` (with the marks some scripts write letters with),
/// at the start of the text or after a character that cannot be part of one, so that `a#b` and a URL's fragment are
/// none. A tag of digits alone is none (`#1`), and neither is one longer than ``maximumLength``. Tags are compared
/// case-folded and in NFC: `#Swift` and `#swift` are one, and so are the two ways of writing `#한글`.
public enum Hashtags {
    public static let maximumLength = 100

    /// The distinct tags of `texts`, folded, in the order they first appear.
    public static func tags(in texts: String...) -> [String] {
        var found: [String] = []
        // Most texts hold no `#`: those are not walked scalar by scalar (a rebuild reads every post).
        for text in texts where text.utf8.contains(UInt8(ascii: "#")) {
            for tag in tags(of: text) where !found.contains(tag) { found.append(tag) }
        }
        return found
    }

    /// `typed` as a tag is compared (a leading `#` left out); nil when it is not one.
    public static func folded(_ typed: String) -> String? {
        let text = typed.hasPrefix("#") ? String(typed.dropFirst()) : typed
        let tags = tags(of: "#" + text)
        guard tags.count == 1, tags[0] == fold(text) else { return nil }
        return tags[0]
    }

    private static func tags(of text: String) -> [String] {
        var tags: [String] = []
        var current: String.UnicodeScalarView?
        var previous: Unicode.Scalar?
        func finish() {
            guard let scalars = current else { return }
            current = nil
            let tag = String(scalars)
            let digitsAlone = tag.unicodeScalars.allSatisfy { $0.properties.generalCategory == .decimalNumber }
            guard !tag.isEmpty, !digitsAlone, tag.count <= maximumLength else { return }
            tags.append(fold(tag))
        }
        for scalar in text.unicodeScalars {
            if current != nil {
                if isWordScalar(scalar) {
                    current!.append(scalar)
                    previous = scalar
                    continue
                }
                finish()
            }
            if scalar == "#", previous.map({ !isWordScalar($0) && $0 != "&" && $0 != "/" }) ?? true {
                current = String.UnicodeScalarView()
            }
            previous = scalar
        }
        finish()
        return tags
    }

    /// A letter of any script, a digit, a mark letters are written with, or `_`: what a tag is made of, and what no
    /// mention follows (``Mentions``).
    static func isWordScalar(_ scalar: Unicode.Scalar) -> Bool {
        if scalar == "_" { return true }
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter, .decimalNumber,
            .nonspacingMark, .spacingMark:
            return true
        default:
            return false
        }
    }

    private static func fold(_ tag: String) -> String { normalized(tag).lowercased() }
}
