import ChorusDomain
import Testing

@Suite("Muted words: which texts a muted word or phrase hides")
struct MutedWordMatcherTests {
    @Test("whole words, any case, in NFC; phrases as words in a row; hashtags are words")
    func wholeWords() {
        let matcher = MutedWordMatcher(["Spoiler", "game of thrones", "café"])
        #expect(matcher.matches(["no SPOILER here"]))
        #expect(matcher.matches(["#spoiler alert"]))
        #expect(!matcher.matches(["spoilers and spoiled"]), "whole words only")
        #expect(matcher.matches(["Game of   Thrones, tonight"]))
        #expect(!matcher.matches(["game and thrones"]))
        #expect(matcher.matches(["a cafe\u{301} au lait"]), "the decomposed form is the same word")
        #expect(!matcher.matches(["", "nothing muted"]))
        #expect(MutedWordMatcher([]).isEmpty && !MutedWordMatcher([]).matches(["spoiler"]))
    }

    @Test("a word of Hangul alone also matches inside a longer run of Hangul, where Korean writes particles onto words")
    func hangul() {
        let matcher = MutedWordMatcher(["서울"])
        #expect(matcher.matches(["서울에서 만나요"]))
        #expect(matcher.matches(["#서울"]))
        #expect(!matcher.matches(["부산에서 만나요", "seoul"]))
        #expect(
            MutedWordMatcher(["Seoul"]).matches(["I love seoul"]) && !MutedWordMatcher(["Seoul"]).matches(["seoulite"]))
    }
}
