import ChorusDomain
import Foundation
import Testing

@Suite("Hashtags: which runs of a text are tags, and how they are folded")
struct HashtagsTests {
    @Test("ASCII, Latin, Hangul and Greek tags are case-folded; composed and decomposed forms are one tag")
    func folding() {
        #expect(Hashtags.tags(in: "#Swift and #StudyWithMe, #swift again") == ["swift", "studywithme"])
        #expect(Hashtags.tags(in: "#Ünïcode") == ["ünïcode"])
        #expect(Hashtags.tags(in: "#U\u{308}ber") == ["über"], "a decomposed letter is composed")
        #expect(Hashtags.tags(in: "#캠퍼스 #축제") == ["캠퍼스", "축제"])
        let decomposed = "#" + "서울".decomposedStringWithCanonicalMapping
        #expect(Hashtags.tags(in: decomposed) == ["서울"])
        #expect(Hashtags.tags(in: "#ΑΘΗΝΑ") == ["αθηνα"])
        #expect(Hashtags.tags(in: "caption #a_b", "text #A_B #c1") == ["a_b", "c1"], "distinct across texts")
    }

    @Test("digits alone, a # inside a word or a URL, and tags over 100 characters are none")
    func notTags() {
        #expect(Hashtags.tags(in: "#123 #١٢٣ a#b https://example.com/page#part https://example.com/#top &#38;").isEmpty)
        #expect(Hashtags.tags(in: "#a#b") == ["a"])
        let longest = String(repeating: "x", count: Hashtags.maximumLength)
        #expect(Hashtags.tags(in: "#" + longest) == [longest])
        #expect(Hashtags.tags(in: "#" + longest + "y").isEmpty)
        // Characters are counted, not scalars: 100 letters with a mark each are one tag.
        let marked = String(repeating: "e\u{301}", count: Hashtags.maximumLength)
        #expect(Hashtags.tags(in: "#" + marked) == [marked.precomposedStringWithCanonicalMapping])
    }

    @Test("a tag as typed into a page's address or a topic is folded as tags are, or refused")
    func typed() {
        #expect(Hashtags.folded("#Seoul") == "seoul" && Hashtags.folded("StudyWithMe") == "studywithme")
        #expect(Hashtags.folded("서울".decomposedStringWithCanonicalMapping) == "서울")
        for refused in ["", "#", "a b", "a#b", "42", "swift ", String(repeating: "x", count: 101)] {
            #expect(Hashtags.folded(refused) == nil, "\(refused)")
        }
    }
}
