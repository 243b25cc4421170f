import Foundation
import TrafficGeoSupport

/// The stretch of road an English report names by its places: "between J29A and J30", "from
/// Kiefersfelden to Inntal", "at Köln-Gremberg", "near Junction 12". (German messages are read by
/// `TrafficMessageParser`; this reads the words of English feeds, National Highways' and the
/// US 511 systems', and English renderings of others.)
///
///     StretchWords.parse("The M1 southbound between J29A and J30")   // ("j29a", "j30"): lower case, to fold
///     StretchWords.parse("Slow traffic on the A66 at Krifteler Dreieck, direction Frankfurt")  // ("krifteler dreieck", nil)
public enum StretchWords {
    /// The place the stretch begins at (or the one place named), and where it ends.
    public static func parse(_ text: String) -> (from: String?, to: String?) {
        // Searched in a lower-case copy (byte for byte: no Foundation search per word), the
        // names taken from the same copy (they are folded to compare anyway).
        let lower = text.lowercased()
        guard openers.occurs(in: lower[...]) else { return (nil, nil) }
        for (open, middle) in [("between ", " and "), ("from ", " to ")] {
            guard let start = wordStart(of: open, in: lower), let and = lower.utf8Range(of: middle, from: start.upperBound) else { continue }
            if let a = place(String(lower[start.upperBound..<and.lowerBound]), whole: true),
               let b = place(String(lower[and.upperBound...]), whole: false) { return (a, b) }
        }
        for open in ["at junction ", "at ", "near "] {
            guard let start = wordStart(of: open, in: lower) else { continue }
            if let a = place(String(lower[start.upperBound...]), whole: false) { return (a, nil) }
        }
        return (nil, nil)
    }

    private static let openers = ByteNeedles(["between ", "from ", "at ", "near "])

    /// `word` where it begins a word of `text`.
    private static func wordStart(of word: String, in text: String) -> Range<String.Index>? {
        var from = text.startIndex
        while let r = text.utf8Range(of: word, from: from) {
            if r.lowerBound == text.startIndex || !text[text.index(before: r.lowerBound)].isLetter { return r }
            from = r.upperBound
        }
        return nil
    }

    /// Words that end a place name.
    private static let stops: Set<String> = ["direction", "towards", "toward", "and", "in", "on", "for", "due", "with", "until", "from", "to",
                                             "northbound", "southbound", "eastbound", "westbound", "both", "is", "are", "has", "have"]

    /// The place at the start of `text`: up to punctuation or a word that ends it, at most five
    /// words; `whole`: all of `text` is the place (what lies between "between" and "and").
    private static func place(_ text: String, whole: Bool) -> String? {
        var words: [Substring] = []
        for w in text.split(separator: " ", omittingEmptySubsequences: true) {
            let punctuated = w.last.map { ",.;:!?()".contains($0) } ?? false
            let word = punctuated ? w.dropLast() : w
            if !whole, stops.contains(String(word)) { break }
            if let first = word.first, first == "(" { break }
            if !word.isEmpty { words.append(word) }
            if (!whole && punctuated) || words.count == 5 { break }
        }
        // "the A4" or a number alone is no place.
        let name = words.drop { ["the", "a", "an"].contains($0) }.joined(separator: " ")
        guard !name.isEmpty, name.contains(where: \.isLetter) || name.count <= 4 else { return nil }
        return name
    }
}
