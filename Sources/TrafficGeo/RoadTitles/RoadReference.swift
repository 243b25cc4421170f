import Foundation

/// A road number such as A4, B54, L123, K12 or E40, normalised without spaces.
///
///     RoadReference.normalize("BAB 4")      // "A4"
///     RoadReference.first(in: "A4 : Koeln - Olpe") // "A4"
public enum RoadReference {
    /// Road classes: Autobahn (A, BAB), Bundesstraße (B), Landes-/Staatsstraße (L, S, St), Kreisstraße (K), Europastraße (E).
    private static let pattern = try! NSRegularExpression(
        pattern: #"(?<![\p{L}\p{N}])(BAB|St|A|B|L|S|K|E)\s?(\d{1,4})([a-z])?(?![\p{L}\p{N}])"#, options: [])

    /// The normalised form of a road reference the user typed, or `nil` if it is not one.
    public static func normalize(_ text: String) -> String? {
        let trimmed = text.trimmed
        guard let ref = first(in: trimmed), matchesWhole(trimmed) else { return nil }
        return ref
    }

    /// The first road reference in a title or text.
    public static func first(in text: String) -> String? {
        mayContainReference(text) ? firstMatch(in: text) : nil
    }

    /// `first(in:)` by the regular expression alone.
    static func firstMatch(in text: String) -> String? {
        let range = NSRange(text.startIndex..., in: text)
        guard let m = pattern.firstMatch(in: text, options: [], range: range) else { return nil }
        return make(m, in: text)
    }

    /// A necessary condition for a match, checked on the bytes: a class letter (A B L S K E, or
    /// the t of St) followed by a digit, directly or after one white space. Most ingested titles
    /// fail it, and the regular expression was a twentieth of a big CSV ingest.
    static func mayContainReference(_ text: String) -> Bool {
        var utf8 = text.utf8.makeIterator()
        var previous: UInt8 = 0, current = utf8.next()
        while let c = current {
            let next = utf8.next()
            let classEnd = c == 0x41 || c == 0x42 || c == 0x4C || c == 0x53 || c == 0x4B || c == 0x45 || (c == 0x74 && previous == 0x53)
            if classEnd, let n = next {
                if n >= 0x30 && n <= 0x39 { return true }
                // White space, then a digit: ASCII spaces are checked below; any non-ASCII byte
                // may start a Unicode space, so the regular expression decides.
                if n >= 0x80 || n == 0x20 || (n >= 0x09 && n <= 0x0D) { return true }
            }
            previous = c
            current = next
        }
        return false
    }

    private static func matchesWhole(_ text: String) -> Bool {
        let range = NSRange(text.startIndex..., in: text)
        guard let m = pattern.firstMatch(in: text, options: [], range: range) else { return false }
        return m.range == range
    }

    private static func make(_ m: NSTextCheckingResult, in text: String) -> String? {
        guard let classRange = Range(m.range(at: 1), in: text), let numberRange = Range(m.range(at: 2), in: text) else { return nil }
        var roadClass = String(text[classRange])
        if roadClass == "BAB" { roadClass = "A" }
        if roadClass == "St" { roadClass = "S" }
        let number = String(Int(text[numberRange]) ?? 0)
        let suffix = Range(m.range(at: 3), in: text).map { String(text[$0]) } ?? ""
        return roadClass + number + suffix
    }
}
