import Foundation
import Testing
import TrafficGeoStore
import TrafficGeoTestSupport

/// `PropertiesJSON.text` writes by hand what `JSONSerialization` with sorted keys writes: stored
/// content hashes depend on the text, so a store written by an older version must not see every
/// incident as changed.
@Suite("Properties JSON")
struct PropertiesJSONTests {
    @Test func sameTextAsJSONSerializationForEveryKindOfKeyAndValue() throws {
        var random = SplitMix64(seed: 40)
        let pieces = ["a", "B", "z", "_", "-", "1", "10", "2", "ä", "Ä", "é", "ß", "/", "\\", "\"", "\n", "\r", "\t", "\u{08}", "\u{0C}",
                      "\u{01}", "\u{1F}", "\u{7F}", " ", "😀", "𝔸", "\u{0301}", "valid_from", "record_types", "Valid", "delay_minutes",
                      "position_problem", "feed_part", "x:y", "<", "&", "\u{2028}", "\u{FEFF}"]
        for _ in 0..<3000 {
            var dictionary: [String: String] = [:]
            for _ in 0..<Int(random.next() % 14) + 1 {
                let key = (0..<Int(random.next() % 4) + 1).map { _ in pieces[Int(random.next() % UInt64(pieces.count))] }.joined()
                let value = (0..<Int(random.next() % 6)).map { _ in pieces[Int(random.next() % UInt64(pieces.count))] }.joined()
                dictionary[key] = value
            }
            let expected = String(decoding: try JSONSerialization.data(withJSONObject: dictionary, options: [.sortedKeys]), as: UTF8.self)
            #expect(PropertiesJSON.text(dictionary) == expected)
        }
        #expect(PropertiesJSON.text([:]) == "{}")
    }
}
