import ChorusLog
import ChorusText
import Foundation
import Testing

@testable import ChorusHTTP
@testable import ChorusProjections

@Suite("JSON writing")
struct JSONWriterTests {
    @Test("strings round-trip through a JSON parser: quotes, backslashes, control characters, Hangul, emoji")
    func escaping() throws {
        let texts = [
            "plain", "quote \" and \\ backslash", "new\nline\ttab\r", "\u{0}\u{1}\u{1F}", "김민수 😀", "</script>",
            // One character to escape each, past the first eight bytes: the scan reads eight at a time.
            "eight bytes, then a \\ backslash", "eight bytes, then a \" quote", "eight bytes, then a tab\t",
        ]
        for text in texts {
            var json = JSONWriter()
            json.object { $0.field("text", text) }
            let parsed = try JSONSerialization.jsonObject(with: Data(json.bytes)) as? [String: Any]
            #expect(parsed?["text"] as? String == text)
            // The same text read in place, and as the last part of a URL.
            var inPlace = JSONWriter()
            Array(text.utf8).withUnsafeBytes { utf8 in
                let stored = StoredText(utf8)
                inPlace.object {
                    $0.field("text") { $0.string(stored) }
                    $0.field("url") { $0.string("http://h\"", "/v1/media/", stored) }
                }
            }
            let parsedInPlace = try JSONSerialization.jsonObject(with: Data(inPlace.bytes)) as? [String: Any]
            #expect(parsedInPlace?["text"] as? String == text)
            #expect(parsedInPlace?["url"] as? String == "http://h\"/v1/media/" + text)
        }
        var json = JSONWriter()
        json.object {
            $0.field("none", String?.none)
            $0.field("list", [1, 2])
            $0.field("flag", true)
            $0.field("nested", UserJSON(id: "a", handle: "h_1", name: "b", major: "", profileImage: nil))
        }
        #expect(
            String(decoding: json.bytes, as: UTF8.self)
                == #"{"none":null,"list":[1,2],"flag":true,"nested":{"id":"a","handle":"h_1","name":"b","major":"","profileImage":null}}"#
        )
    }

    @Test("the escape scan finds the first byte to escape at every length, place and start, beside Hangul's bytes")
    func escapeScan() {
        // A byte at a time, as the scan's eight-byte words must agree with.
        func reference(_ bytes: [UInt8], from start: Int) -> Int? {
            bytes.indices.dropFirst(start).first { bytes[$0] < 0x20 || bytes[$0] == 0x22 || bytes[$0] == 0x5C }
        }
        let filler = Array("가a".utf8)  // bytes from 0x80 up, and one below
        for length in 0...25 {
            let clean = (0..<length).map { filler[$0 % filler.count] }
            for escaped: UInt8 in [0x00, 0x1F, 0x22, 0x5C] {
                // None, one, or two (the second after the first, which a borrow could mark falsely).
                var texts = [clean]
                for place in 0..<length {
                    var one = clean
                    one[place] = escaped
                    texts.append(one)
                    if place + 1 < length { texts.append(one.enumerated().map { $0 == place + 1 ? 0x22 : $1 }) }
                }
                for text in texts {
                    for start in 0...length {
                        let found = text.withUnsafeBytes { JSONEscapes.firstEscaped(in: $0, from: start) }
                        #expect(found == reference(text, from: start), "\(text) from \(start)")
                    }
                }
            }
        }
    }

    @Test("whole numbers are written digit for digit, from zero to the extremes")
    func integers() {
        var generator = SystemRandomNumberGenerator()
        let unsigned: [UInt64] =
            [0, 9, 10, 99, 100, 1_000_000, UInt64.max]
            + (0..<500).map { _ in .random(in: 0...UInt64.max, using: &generator) }
        for value in unsigned {
            var json = JSONWriter()
            value.write(to: &json)
            #expect(String(decoding: json.bytes, as: UTF8.self) == String(value))
        }
        for value in [0, -1, 42, -10, Int.min, Int.max] {
            var json = JSONWriter()
            value.write(to: &json)
            #expect(String(decoding: json.bytes, as: UTF8.self) == String(value))
        }
    }

    /// Foundation's own fractional seconds come from a Double and are sometimes a millisecond short (….999 as
    /// ….998), so the reference is its whole-second form plus the exact milliseconds.
    @Test("timestamps are RFC 3339 UTC with exact milliseconds, across centuries")
    func timestamps() {
        var generator = SystemRandomNumberGenerator()
        var samples: [Int64] = [0, 1, 999, 1000, -1, -1000, 951_782_400_000, 1_709_164_800_123, 4_107_542_399_999]
        for _ in 0..<2_000 {
            samples.append(Int64.random(in: -2_208_988_800_000...4_102_444_800_000, using: &generator))
        }
        for milliseconds in samples {
            let time = EventTime(millisecondsSince1970: milliseconds)
            let (seconds, fraction) = (
                Int64((Double(milliseconds) / 1000).rounded(.down)), ((milliseconds % 1000) + 1000) % 1000
            )
            let whole = Date(timeIntervalSince1970: Double(seconds)).formatted(.iso8601)
            let expected = whole.dropLast() + "." + String(String(fraction + 1000).dropFirst()) + "Z"
            var json = JSONWriter()
            time.write(to: &json)
            #expect(String(decoding: json.bytes, as: UTF8.self) == "\"\(expected)\"", "\(milliseconds)")
        }
    }
}
