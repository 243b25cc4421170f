import Foundation
import Testing
@testable import TrafficGeoSupport

@Suite("JSON text")
struct JSONObjectTextTests {
    /// Whatever the text holds, the JSON parses back to it, and the characters that end a line in
    /// JavaScript never appear raw (the map page embeds JSON in a script).
    @Test(arguments: ["plain", "", "A4 : Köln – Olpe", "quote \" and \\ backslash", "tab\tnew\nline\r",
                      "\u{01}\u{1F}\u{7F}", "line\u{2028}para\u{2029}", "emoji 🚧 and ß", "ends in a \\"])
    func stringsRoundTrip(text: String) throws {
        var o = JSONObjectText()
        o.add("text", text)
        o.add("n", 2.5)
        o.openObject("inner")
        o.add("k", text)
        o.add("count", Int64(-3))
        o.closeObject()
        o.add(raw: "raw", "[1,2]")
        let json = o.closed()
        #expect(!json.contains("\u{2028}") && !json.contains("\u{2029}"))
        #expect(!json.unicodeScalars.contains { $0.value < 0x20 })
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(parsed["text"] as? String == text)
        #expect(parsed["n"] as? Double == 2.5)
        let inner = try #require(parsed["inner"] as? [String: Any])
        #expect(inner["k"] as? String == text)
        #expect(inner["count"] as? Int == -3)
        #expect(parsed["raw"] as? [Int] == [1, 2])
        #expect(Array(json.utf8) + [] == o.closedBytes())
    }

    @Test func keysKeepTheirOrderAndObjectsContinueABuffer() {
        var o = JSONObjectText(appendingTo: Array("[".utf8))
        o.add("b", "1")
        o.add("a", nil as String?)
        o.add("a", 1.0)
        o.add("c", .infinity)
        #expect(String(decoding: o.closedBytes(), as: UTF8.self) == "[{\"b\":\"1\",\"a\":1}")
    }
}
