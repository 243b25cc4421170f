import Foundation
import TrafficGeoSupport

/// A road reference of any scheme (Germany's A4, B54, L123, K12; UK's M25, A1(M); I-87, US-101,
/// NY-9a; N-340, AP-7; SH-16; E40; `WorldRoads` lists them), in its normal form.
///
///     RoadReference.normalize("BAB 4")                         // "A4"
///     RoadReference.first(in: "A4 : Koeln - Olpe")             // "A4"
///     RoadReference.first(in: "M11 southbound between J5 and J4") // "M11"
///     RoadReference.roads(inField: "Merritt Parkway/CT 15")    // ["CT-15", "Merritt Parkway"]
///
/// One grammar for the title parser, every reader's road fields and the road filter: a road
/// the tool shows for an incident is one `--road` accepts and finds it by.
public enum RoadReference {
    /// Road classes: Autobahn (A, BAB), Bundesstraße (B), Landes-/Staatsstraße (L, S, St), Kreisstraße (K), Europastraße (E).
    private static let pattern = try! NSRegularExpression(
        pattern: #"(?<![\p{L}\p{N}])(BAB|St|A|B|L|S|K|E)\s?(\d{1,4})([a-z])?(?![\p{L}\p{N}])"#, options: [])

    /// The normalised form of a road reference a person typed or a feed's road field gives, or
    /// `nil` if it is not one: Germany's (A4 = a4 = A 4 = BAB 4) and the other schemes of
    /// `WorldRoads` (I-25 = I 25 = Interstate 25, US-40, CO-7, M1, A1(M), N7, RN7 = N7, D906, SS1, E40).
    public static func normalize(_ text: String) -> String? {
        let trimmed = text.trimmed
        if let ref = firstGerman(in: trimmed)?.road, matchesWhole(trimmed) { return ref }
        // Typed by a person: "a1", "bab 4" are A1 and A4 (texts keep their case rule in `first(in:)`).
        let upper = trimmed.uppercased()
        if upper != trimmed, let ref = firstGerman(in: upper)?.road, matchesWhole(upper) { return ref }
        return WorldRoads.normalize(trimmed)
    }

    /// The roads a road filter takes for a normal form, itself first: a state's or province's
    /// road of a number is also the unqualified State Route and Highway of that number, and
    /// those are any state's or province's ("SR-1" finds "CA-1"; "Highway 14" finds "BC-14").
    public static func equivalents(_ road: String) -> [String] { WorldRoads.equivalents(road) }

    /// A feed's road field ("I-70", "I 70", "A1(M)", "A 4", "I-87 Northway"): its normal form,
    /// else the first reference in it (`roads(inField:)`), else the first German reference of
    /// a sentence, else nil.
    public static func field(_ text: String) -> String? {
        // Most fields are already a German reference ("A4"): found without the regular expressions.
        if let ref = firstGerman(in: text), ref.road.utf8.elementsEqual(text.utf8.lazy.filter { $0 != 0x20 }) { return ref.road }
        return normalize(text) ?? WorldRoads.references(inField: text).first ?? firstGerman(in: text)?.road
    }

    /// The roads a feed's road field names: every reference in it ("Merritt Parkway/CT 15" is
    /// the CT-15, "I-87 Northway" the I-87), the whole field when it is one name ("Sprain Brook
    /// State Pkwy"), and each part of several that names a street by its type ("Merritt
    /// Parkway": `RoadNameSpellings.namesAStreet`), white space collapsed, as that road's name
    /// (`RoadCondition(name:)` finds it). Empty for an empty field.
    public static func roads(inField text: String) -> [String] {
        let whole = withoutBracketedQualifiers(text).split(whereSeparator: \.isWhitespace).joined(separator: " ")
        guard !whole.isEmpty, !PlaceholderText.isPlaceholder(whole) else { return [] }
        let parts = WorldRoads.fieldParts(whole)
        if let road = field(whole), parts.count <= 1 {
            return [road] + (nameAfterReference(in: whole).map { [$0] } ?? [])
        }
        var references: [String] = [], names: [String] = []
        for part in parts {
            let found = WorldRoads.references(inField: part)
            if !found.isEmpty {
                references += found
                if let name = nameAfterReference(in: part) { names.append(name) }
            } else if let german = firstGerman(in: part) {
                references.append(german.road)
            } else if let last = references.last, let same = WorldRoads.sameScheme(as: last, number: part) {
                references.append(same)
            } else if isName(part), parts.count == 1 || RoadNameSpellings.namesAStreet(part) || isRoadCode(part) {
                // A part beside others is a road's name only when it says it is one ("Merritt
                // Parkway", "Schillerstraße") or is a code of letters and digits ("F22", a
                // feed's own road code): the other parts of a feed's field are as often a direction
                // ("Highway 7 N/S Southbound"), a region ("Kanton Zürich, Schweiz") or a path
                // ("highway/sh2").
                names.append(part)
            }
        }
        var seen: Set<String> = []
        return (references + names).filter { seen.insert($0).inserted }
    }

    /// One word of letters and digits: a road's code that no scheme reads ("F22").
    static func isRoadCode(_ part: String) -> Bool {
        !part.contains(" ") && part.contains(where: \.isLetter) && part.contains(where: \.isNumber)
    }

    /// The text without what it says in square brackets: a qualifier a feed appends to a road
    /// ("NY 17 [Orange]", "Hutchinson River Parkway [Westchester]": the county), no part of its name.
    public static func withoutBracketedQualifiers(_ text: String) -> String {
        guard text.contains("[") else { return text }
        var out = "", depth = 0
        for c in text {
            if c == "[" { depth += 1 } else if c == "]", depth > 0 { depth -= 1 } else if depth == 0 { out.append(c) }
        }
        return out
    }

    /// The roads of several road fields (a WZDx event's `road_names`, an Open511 event's roads),
    /// references first, so that an incident's road is a reference wherever one is named.
    public static func roads(inFields fields: [String]) -> [String] {
        let found = fields.flatMap(roads(inField:))
        var seen: Set<String> = []
        let ordered = found.filter { normalize($0) != nil } + found.filter { normalize($0) == nil }
        return ordered.filter { seen.insert($0).inserted }
    }

    /// The name a road field gives after its reference ("I-87 Northway": "Northway"; "I-87
    /// Major Deegan Expressway", "NY 9A - Henry Hudson Parkway"), so that the road is found by either: a few words with letters
    /// and no digit that say no direction ("I-95 northbound") and begin no place on the road
    /// ("I-70 at Exit 5", "US-6 near Golden": a word of four letters or fewer in lower case).
    static func nameAfterReference(in part: String) -> String? {
        let words = part.split(separator: " ").map(String.init)
        guard let (_, count) = leadingReference(in: words[...]), count < words.count else { return nil }
        // "NY 9A - Henry Hudson Parkway", "I-87: Northway": a dash or colon between them is no word of the name.
        let rest = words[count...].drop(while: { $0.allSatisfy { "-–—:".contains($0) } })
        let name = rest.joined(separator: " ")
        guard rest.count <= 4, isName(name), !name.contains(where: \.isNumber),
              let first = rest.first, !(first.count <= 4 && first == first.lowercased()),
              TravelDirection.of(field: name).isUnknown, rest.allSatisfy({ TravelDirection.of(field: $0).isUnknown }) else { return nil }
        return name
    }

    /// A part of a road field that can be a road's name: a letter in it, not a placeholder a
    /// feed writes for "none" ("unknown", "N/A").
    static func isName(_ text: String) -> Bool {
        text.contains(where: \.isLetter) && !PlaceholderText.isPlaceholder(text) && text.count <= 80
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

    /// The first road reference of any scheme in a title or text (free text: `WorldRoads`' rules
    /// for it). Germany's references are found first by the fast matcher; another scheme's
    /// reference is looked for only before that one, so a German title costs no more than before.
    public static func first(in text: String) -> String? {
        let german = firstGerman(in: text)
        if let other = WorldRoads.firstInText(text, before: german?.start ?? .max) { return other }
        guard let german else { return nil }
        // UK: "A1(M)" is the motorway stretch of the A1, a road of its own.
        let after = text.utf8.dropFirst(german.end)
        if after.starts(with: "(M)".utf8) || after.starts(with: " (M)".utf8) { return german.road + "(M)" }
        return german.road
    }

    /// The first German-scheme reference (A, BAB, B, L, S, St, K, E and the number) and where it
    /// starts and ends, in UTF-8 offsets.
    static func firstGerman(in text: String) -> (road: String, start: Int, end: Int)? {
        guard mayContainReference(text) else { return nil }
        var text = text
        // ASCII text (nearly every title) is matched by hand, the same rule as the regular
        // expression spelled out; ICU's matcher cost a tenth of reading a feed entry. Anything
        // else (Unicode letters, digits and spaces) goes to the regular expression.
        let ascii = text.withUTF8 { bytes -> (String, Int, Int)?? in bytes.allSatisfy { $0 < 0x80 } ? .some(firstASCIIMatch(bytes)) : .none }
        if let ascii { return ascii.map { (road: $0.0, start: $0.1, end: $0.2) } }
        return firstMatchRange(in: text)
    }

    /// `pattern` on ASCII bytes: not after a letter or digit, a road class, at most one white
    /// space, one to four digits, an optional lower-case letter, and no letter or digit after.
    /// The answer is built by `reference`, as for the regular expression's matches, with the
    /// byte offsets of its start and end.
    private static func firstASCIIMatch(_ text: UnsafeBufferPointer<UInt8>) -> (String, Int, Int)? {
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
            if !isAlphanumeric(end) { return (reference(roadClass, number: number, suffix: ""), start, end) }
            if text[end] >= 0x61 && text[end] <= 0x7A && !isAlphanumeric(end + 1) {
                return (reference(roadClass, number: number, suffix: String(UnicodeScalar(text[end]))), start, end + 1)
            }
        }
        return nil
    }

    /// `firstGerman(in:)`'s reference by the regular expression alone.
    static func firstMatch(in text: String) -> String? { firstMatchRange(in: text)?.road }

    /// The regular expression's first match, with its UTF-8 offsets.
    static func firstMatchRange(in text: String) -> (road: String, start: Int, end: Int)? {
        let range = NSRange(text.startIndex..., in: text)
        guard let m = pattern.firstMatch(in: text, options: [], range: range), let road = make(m, in: text),
              let whole = Range(m.range, in: text) else { return nil }
        return (road, text.utf8.distance(from: text.startIndex, to: whole.lowerBound), text.utf8.distance(from: text.startIndex, to: whole.upperBound))
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
