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
        let text = typed.hasPrefix("#") ? typed.dropFirst() : typed[...]
        // Nothing but what tags are made of: then the whole of it is one tag, or none (digits alone, too long).
        guard text.unicodeScalars.allSatisfy(isWordScalar) else { return nil }
        return tags(of: "#" + text).first
    }

    private static func tags(of text: String) -> [String] {
        var tags: [String] = []
        let scalars = text.unicodeScalars
        var run: TagRun?
        var previous: Unicode.Scalar?
        func finish(at end: String.UnicodeScalarView.Index) {
            guard let found = run else { return }
            run = nil
            if let tag = found.tag(in: scalars[found.start..<end]) { tags.append(tag) }
        }
        var index = scalars.startIndex
        while index < scalars.endIndex {
            let scalar = scalars[index]
            let next = scalars.index(after: index)
            defer { (previous, index) = (scalar, next) }
            if run != nil {
                if isWordScalar(scalar) {
                    run!.include(scalar)
                    continue
                }
                finish(at: index)
            }
            if scalar == "#", previous.map({ !isWordScalar($0) && $0 != "&" && $0 != "/" }) ?? true {
                run = TagRun(start: next)
            }
        }
        finish(at: scalars.endIndex)
        return tags
    }

    /// The scalars after a `#`, and what a rebuild must know of them without looking again: most tags are ASCII or
    /// Hangul, which need neither a character count nor normalisation (a rebuild parses every post that holds a `#`).
    private struct TagRun {
        let start: String.UnicodeScalarView.Index
        var scalars = 0
        var digitsAlone = true
        /// Every scalar is one that NFC leaves alone and that no later scalar of a tag composes with.
        var stableUnderNFC = true

        init(start: String.UnicodeScalarView.Index) { self.start = start }

        mutating func include(_ scalar: Unicode.Scalar) {
            scalars += 1
            if digitsAlone {
                digitsAlone =
                    scalar.isASCII
                    ? ("0"..."9").contains(scalar) : scalar.properties.generalCategory == .decimalNumber
            }
            // Below U+0300 nothing composes or decomposes under NFC; precomposed Hangul syllables are NFC already.
            if stableUnderNFC { stableUnderNFC = scalar.value < 0x300 || Self.hangulSyllables.contains(scalar.value) }
        }

        static let hangulSyllables: ClosedRange<UInt32> = 0xAC00...0xD7A3

        /// The folded tag, or nil when these scalars are none.
        func tag(in found: Substring.UnicodeScalarView) -> String? {
            guard scalars > 0, !digitsAlone else { return nil }
            let tag = String(found)
            // A character is at least one scalar: only a long run needs counting.
            guard scalars <= maximumLength || tag.count <= maximumLength else { return nil }
            return stableUnderNFC ? tag.lowercased() : fold(tag)
        }
    }

    /// A letter of any script, a digit, a mark letters are written with, or `_`: what a tag is made of, and what no
    /// mention follows (``Mentions``).
    static func isWordScalar(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.isASCII {
            return ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
                || scalar == "_"
        }
        if TagRun.hangulSyllables.contains(scalar.value) { return true }
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
