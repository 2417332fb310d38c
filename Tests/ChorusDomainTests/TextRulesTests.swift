import Testing

@testable import ChorusDomain

@Suite("Text rules: what a field takes, and normalising hostile text")
struct TextRulesTests {
    /// The code a text field's check refuses `text` with; nil when it takes it.
    static func refusal(_ check: () throws(DomainError) -> String) -> DomainError.Code? {
        do {
            _ = try check()
            return nil
        } catch {
            return error.code
        }
    }

    @Test("a field's limit holds in characters and, beside them, in Unicode scalars: four per character of the limit")
    func scalars() {
        func post(_ text: String) -> DomainError.Code? {
            Self.refusal { () throws(DomainError) in
                try Validate.requiredText(text, field: "text", limit: FieldLimits.postText)
            }
        }
        #expect(post(String(repeating: "a", count: 280)) == nil)
        #expect(post(String(repeating: "a", count: 281)) == .textTooLong)
        // One character, 1,121 scalars.
        #expect(post("a" + String(repeating: "\u{0301}", count: 1_120)) == .textTooLong)
        #expect(post(String(repeating: "👩🏽‍💻", count: 140)) == nil, "five scalars a character, half the characters")
        #expect(post(String(repeating: "क्षि", count: 280)) == nil, "Devanagari at the limit: four scalars each")
        // Decomposed Korean counts as it is stored: composed, one scalar a syllable.
        #expect(post(String(repeating: "한", count: 280).decomposedStringWithCanonicalMapping) == nil)
    }

    @Test("control characters are refused, but newline and tab where text has lines; text showing nothing is empty")
    func controls() {
        for control in ["\u{0}", "\u{1B}", "\u{7}", "\r", "\u{7F}", "\u{85}", "\u{9B}"] {
            #expect(
                Self.refusal { () throws(DomainError) in
                    try Validate.optionalText("a\(control)b", field: "text", limit: 100)
                } == .invalidField, "\(control.unicodeScalars.first!.value)")
        }
        #expect(
            Self.refusal { () throws(DomainError) in try Validate.optionalText("a\nb\tc", field: "t", limit: 9) } == nil
        )
        #expect(Self.refusal { () throws(DomainError) in try Validate.name("a\tb") } == .invalidField)
        #expect(
            Self.refusal { () throws(DomainError) in try Validate.requiredText("\u{200B}\u{2800}", field: "t", limit: 9)
            } == .emptyText)
        #expect(Self.refusal { () throws(DomainError) in try Validate.name("\u{3164}") } == .invalidField)
        #expect(Self.refusal { () throws(DomainError) in try Validate.name("Ana\u{202E}") } == .invalidField)
        #expect(Self.refusal { () throws(DomainError) in try Validate.name("😀") } == nil)
        #expect(
            Self.refusal { () throws(DomainError) in try Validate.email("a\u{200B}b@example.com") } == .invalidEmail)
    }

    @Test(
        "normalising puts a combining grapheme joiner after every 30 marks in a row, and changes no text with fewer")
    func streamSafe() {
        let marks: [Character] = ["\u{0301}", "\u{0316}", "\u{0315}", "\u{0345}"]
        let hostile = "a" + String((0..<32_000).map { marks[$0 % 4] })
        let safe = ChorusDomain.streamSafe(hostile)
        #expect(safe.unicodeScalars.count == 1 + 32_000 + (32_000 - 1) / 30)
        var run = 0
        for scalar in safe.unicodeScalars {
            run = scalar.properties.canonicalCombiningClass == .notReordered ? 0 : run + 1
            #expect(run <= 30)
            if run > 30 { break }
        }
        for text in ["Zoë", "김민수", "क्षि", "a" + String(repeating: "\u{0301}", count: 30), "👩‍👩‍👧"] {
            #expect(ChorusDomain.streamSafe(text) == text)
        }
        // Marks of class 0 that decompose into marks count too.
        #expect(ChorusDomain.streamSafe(String(repeating: "\u{0F73}", count: 31)).unicodeScalars.count == 32)
        #expect(normalized(" e\u{0301} ") == "é")
    }
}
