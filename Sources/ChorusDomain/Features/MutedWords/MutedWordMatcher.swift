/// Whether a text holds one of a user's muted words or phrases. Texts and words are compared case-folded and in NFC,
/// whole words at a time: a word is a run of letters of any script, digits, marks and `_` (as a hashtag is, so that
/// muting `swift` hides `#Swift` too), and a phrase is its words in a row. A muted word of Hangul alone also matches
/// inside a longer run of Hangul, where Korean writes particles onto words: `서울` hides `서울에서`.
public struct MutedWordMatcher: Sendable {
    /// Single words, not Hangul: looked up whole.
    private var words: Set<String> = []
    /// Everything else: phrases, and Hangul words that match inside others.
    private var others: [[String]] = []

    public init(_ muted: some Sequence<String>) {
        for word in muted {
            let tokens = Self.tokens(of: word)
            if tokens.count == 1, !Self.isHangul(tokens[0]) {
                words.insert(tokens[0])
            } else if !tokens.isEmpty {
                others.append(tokens)
            }
        }
    }

    public var isEmpty: Bool { words.isEmpty && others.isEmpty }

    /// Whether any of `texts` holds a muted word or phrase.
    public func matches(_ texts: [String]) -> Bool {
        guard !isEmpty else { return false }
        for text in texts where !text.isEmpty {
            let tokens = Self.tokens(of: text)
            if tokens.contains(where: words.contains) { return true }
            for phrase in others where phrase.count <= tokens.count {
                for start in 0...(tokens.count - phrase.count)
                where zip(phrase, tokens[start...]).allSatisfy({ Self.matches($0.0, $0.1) }) {
                    return true
                }
            }
        }
        return false
    }

    /// The words of `text`, folded.
    public static func tokens(of text: String) -> [String] {
        var tokens: [String] = []
        var current = String.UnicodeScalarView()
        for scalar in normalized(text).lowercased().unicodeScalars {
            if Hashtags.isWordScalar(scalar) {
                current.append(scalar)
            } else if !current.isEmpty {
                tokens.append(String(current))
                current = String.UnicodeScalarView()
            }
        }
        if !current.isEmpty { tokens.append(String(current)) }
        return tokens
    }

    /// Whether the muted word `muted` matches the text's word `word`.
    private static func matches(_ muted: String, _ word: String) -> Bool {
        muted == word || (isHangul(muted) && word.contains(muted))
    }

    private static func isHangul(_ word: String) -> Bool {
        word.unicodeScalars.allSatisfy { scalar in
            (0xAC00...0xD7A3).contains(scalar.value) || (0x1100...0x11FF).contains(scalar.value)
                || (0x3130...0x318F).contains(scalar.value)
        }
    }
}
