import Foundation
import TrafficGeoSupport

/// A road number such as A4, B54, L123, K12 or E40, normalised without spaces.
///
///     RoadReference.normalize("BAB 4")      // "A4"
///     RoadReference.first(in: "A4 : Koeln - Olpe") // "A4"
public enum RoadReference {
    /// Road classes: Autobahn (A, BAB), Bundesstraße (B), Landes-/Staatsstraße (L, S, St), Kreisstraße (K), Europastraße (E).
    private static let pattern = try! NSRegularExpression(
        pattern: #"(?<![\p{L}\p{N}])(BAB|St|A|B|L|S|K|E)\s?(\d{1,4})([a-z])?(?![\p{L}\p{N}])"#, options: [])

    /// The normalised form of a road reference a person typed or a feed's road field gives, or
    /// `nil` if it is not one: Germany's (A4 = a4 = A 4 = BAB 4) and the other schemes of
    /// `WorldRoads` (I-25 = I 25 = Interstate 25, US-40, CO-7, M1, A1(M), N7, RN7 = N7, D906, SS1, E40).
    public static func normalize(_ text: String) -> String? {
        let trimmed = text.trimmed
        if let ref = first(in: trimmed), matchesWhole(trimmed) { return ref }
        // Typed by a person: "a1", "bab 4" are A1 and A4 (texts keep their case rule in `first(in:)`).
        let upper = trimmed.uppercased()
        if upper != trimmed, let ref = first(in: upper), matchesWhole(upper) { return ref }
        return WorldRoads.normalize(trimmed)
    }

    /// A feed's road field ("I-70", "I 70", "A1(M)", "A 4"): its normal form, else the first
    /// German reference in it, else nil.
    public static func field(_ text: String) -> String? {
        // Most fields are already a German reference ("A4"): found without the regular expressions.
        if let ref = first(in: text), ref.utf8.elementsEqual(text.utf8.lazy.filter { $0 != 0x20 }) { return ref }
        return normalize(text) ?? first(in: text)
    }

    /// The first road reference of any scheme (`normalize`) in a text that names a place on a
    /// road ("The M1 southbound between J29A and J30" → M1, "I 25 north of Exit 210" → I-25).
    /// Only for texts a feed says are a location: in free text "S1" may be a train.
    public static func firstOfAnyScheme(inPlace text: String) -> String? {
        let words = text.split(whereSeparator: { $0.isWhitespace }).prefix(64)
            .map { $0.trimmingCharacters(in: CharacterSet(charactersIn: ",;.:")) }
        for i in words.indices {
            if let found = leadingReference(in: words[i...]) { return found.road }
        }
        return nil
    }

    /// The road reference that the words begin with, if any, and how many words it takes: the
    /// longest run of up to three words that starts with a letter, ends in a word with a digit
    /// ("Interstate 25", "US 40", "A1(M)"; "US 6 westbound" is the road and then a word) and
    /// `normalize` reads.
    public static func leadingReference(in words: ArraySlice<String>) -> (road: String, count: Int)? {
        guard let start = words.first, start.first?.isLetter == true else { return nil }
        for k in stride(from: min(3, words.count), through: 1, by: -1) {
            let run = words.prefix(k)
            guard run.last!.contains(where: \.isNumber), let road = normalize(run.joined(separator: " ")) else { continue }
            return (road, k)
        }
        return nil
    }

    /// The first road reference in a title or text.
    public static func first(in text: String) -> String? {
        guard mayContainReference(text) else { return nil }
        var text = text
        // ASCII text (nearly every title) is matched by hand, the same rule as the regular
        // expression spelled out; ICU's matcher cost a tenth of reading a feed entry. Anything
        // else (Unicode letters, digits and spaces) goes to the regular expression.
        let ascii = text.withUTF8 { bytes -> String?? in bytes.allSatisfy { $0 < 0x80 } ? .some(firstASCIIMatch(bytes)) : .none }
        return ascii ?? firstMatch(in: text)
    }

    /// `pattern` on ASCII bytes: not after a letter or digit, a road class, at most one white
    /// space, one to four digits, an optional lower-case letter, and no letter or digit after.
    /// The answer is built by `reference`, as for the regular expression's matches.
    private static func firstASCIIMatch(_ text: UnsafeBufferPointer<UInt8>) -> String? {
        func isAlphanumeric(_ i: Int) -> Bool {
            guard i >= 0, i < text.count else { return false }
            let c = text[i] | 0x20
            return (c >= 0x61 && c <= 0x7A) || (text[i] >= 0x30 && text[i] <= 0x39)
        }
        func isDigit(_ i: Int) -> Bool { i < text.count && text[i] >= 0x30 && text[i] <= 0x39 }
        // ICU's \s in ASCII: space and tab to carriage return (the test compares with ICU).
        func isSpace(_ i: Int) -> Bool { i < text.count && (text[i] == 0x20 || (text[i] >= 0x09 && text[i] <= 0x0D)) }
        var start = 0
        while start < text.count {
            defer { start += 1 }
            guard !isAlphanumeric(start - 1) else { continue }
            let roadClass: String
            switch text[start] {
            case UInt8(ascii: "B") where start + 2 < text.count && text[start + 1] == UInt8(ascii: "A") && text[start + 2] == UInt8(ascii: "B"):
                roadClass = "BAB"
            case UInt8(ascii: "S") where start + 1 < text.count && text[start + 1] == UInt8(ascii: "t"):
                roadClass = "St"
            case UInt8(ascii: "A"), UInt8(ascii: "B"), UInt8(ascii: "L"), UInt8(ascii: "S"), UInt8(ascii: "K"), UInt8(ascii: "E"):
                roadClass = String(UnicodeScalar(text[start]))
            default:
                continue
            }
            // The optional space is greedy, but a space followed by no digit falls back to none,
            // where the space is no digit either: one reading to try.
            var digits = start + roadClass.utf8.count
            if isSpace(digits) { digits += 1 }
            var end = digits
            while isDigit(end) { end += 1 }
            guard end > digits, end - digits <= 4 else { continue }
            var number = 0
            for i in digits..<end { number = number * 10 + Int(text[i] - 0x30) }
            if !isAlphanumeric(end) { return reference(roadClass, number: number, suffix: "") }
            if text[end] >= 0x61 && text[end] <= 0x7A && !isAlphanumeric(end + 1) {
                return reference(roadClass, number: number, suffix: String(UnicodeScalar(text[end])))
            }
        }
        return nil
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
        let suffix = Range(m.range(at: 3), in: text).map { String(text[$0]) } ?? ""
        return reference(String(text[classRange]), number: Int(text[numberRange]) ?? 0, suffix: suffix)
    }

    /// The normalised reference: the class as written (BAB as A, St as S), the number without
    /// leading zeros, the suffix letter.
    private static func reference(_ roadClass: String, number: Int, suffix: String) -> String {
        let normalisedClass = roadClass == "BAB" ? "A" : roadClass == "St" ? "S" : roadClass
        return normalisedClass + String(number) + suffix
    }
}
