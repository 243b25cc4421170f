import Foundation

/// Road references of every scheme trafficgeo knows, each in its normal form: as a person types
/// them, as a feed's road field gives them, and (more strictly) as free text names them.
///
///     | typed                                     | normal form |
///     |-------------------------------------------|-------------|
///     | I-25, I 25, I25, Interstate 25, IH 35     | I-25        |
///     | US-40, US 40, US Highway 40, U.S. 40      | US-40       |
///     | SR 7, State Route 7; SH 7, State Highway 7 | SR-7; SH-7 |
///     | CO-7, CO 7, CA Highway 1, NY-9A (a state's code) | CO-7, CA-1, NY-9a |
///     | County Road 12, CR 12                     | CR-12       |
///     | M1, M25, A1(M), A404(M), A404, B1234 (UK), M50, N7, R132 (Ireland) | M1, A1(M), … |
///     | A7, N7, RN7, D906, RD906 (France); A-7, N-340 (Spain); A2, N201, R0; SS1; E40 | A7, N7, D906, N340, SS1, E40 |
///     | AP-7, GIV-5232, CV-500 (Spain's other classes: letters, a hyphen, the number) | AP-7, GIV-5232 |
///     | SH 16, SH1, State Highway 1 (New Zealand) | SH-16        |
///     | valtatie 4, kantatie 51, kt 51, seututie 101, Tie 4 (Finland's numbered roads) | FI-4, FI-51 |
///
/// Free text (a title, a description) is read more strictly (`firstInText`), because there a
/// word with a number is not always a road: a state's code needs its hyphen or a road word
/// ("NY-9A", "CT Route 15"; "OR 3" is a conjunction and a number), a one-letter class other than
/// Germany's needs no space or a hyphen ("M25", "N-340"; "M 5" is not taken), the letters of a
/// class are written in capitals ("M25", not "m25"), and Spain's lettered classes are taken only
/// from road fields (in free text "PM-10" is dust).
enum WorldRoads {
    /// The normal form of a whole text that is a road reference, or nil.
    static func normalize(_ text: String) -> String? { match(text)?.road }

    /// A road reference and how it was written.
    struct Match {
        var road: String
        var kind: Kind
    }

    enum Kind {
        /// Interstates, US routes, SR/SH/CR (written with their class word or letters).
        case national
        /// A US state's code as the class (CO-7, NY-9A).
        case stateCode
        /// Europe's one- or two-letter classes (M1, A1(M), N7, D906, SS1, E40, BAB 4).
        case european
        /// Spain's lettered classes with a hyphen (AP-7, GIV-5232).
        case lettered
        /// Finland's numbered roads (valtatie 4).
        case finnish
    }

    static func match(_ text: String) -> Match? {
        // Upper case, dots dropped (U.S.), runs of white space one space.
        var words = text.uppercased().replacingOccurrences(of: ".", with: "").split(whereSeparator: { $0.isWhitespace })
        // A direction after the road ("I-70 WB", "M1 northbound") is not part of it.
        if words.count > 1, let last = words.last, directions.contains(String(last)) { words.removeLast() }
        let t = words.joined(separator: " ")
        guard !t.isEmpty, t.utf8.count <= 40 else { return nil }
        for (pattern, kind, make) in patterns {
            let range = NSRange(t.startIndex..., in: t)
            guard let m = pattern.firstMatch(in: t, range: range), m.range == range else { continue }
            func group(_ k: Int) -> String? { Range(m.range(at: k), in: t).map { String(t[$0]) } }
            if let made = make(group) { return Match(road: made, kind: kind) }
        }
        return nil
    }

    private static let directions: Set<String> = ["N", "S", "E", "W", "NB", "SB", "EB", "WB", "NORTH", "SOUTH", "EAST", "WEST",
                                                  "NORTHBOUND", "SOUTHBOUND", "EASTBOUND", "WESTBOUND"]

    /// A number without leading zeros and its suffix letter, lower case ("25a").
    private static func number(_ digits: String?, _ suffix: String?, zero: Bool = false) -> String? {
        guard let digits, let n = Int(digits), n > 0 || zero else { return nil }
        return String(n) + (suffix?.lowercased() ?? "")
    }

    private static let separator = #"(?: ?- ?| )?"#
    private static let tail = #"(\d{1,4})([A-Z])?"#
    static let stateCodes: Set<String> = [
        "AL", "AK", "AZ", "AR", "CA", "CO", "CT", "DE", "FL", "GA", "HI", "ID", "IL", "IN", "IA", "KS", "KY", "LA", "ME", "MD", "MA",
        "MI", "MN", "MS", "MO", "MT", "NE", "NV", "NH", "NJ", "NM", "NY", "NC", "ND", "OH", "OK", "OR", "PA", "RI", "SC", "SD", "TN",
        "TX", "UT", "VT", "VA", "WA", "WV", "WI", "WY", "DC",
        // Canada's provinces (BC-14, ON-401); not its territories, whose codes are other schemes' words.
        "BC", "AB", "SK", "MB", "ON", "QC", "NB", "NS", "PE", "NL",
    ]

    private static func regex(_ pattern: String) -> NSRegularExpression { try! NSRegularExpression(pattern: "^" + pattern + "$") }

    /// Tried in order; the first whole match that makes a reference wins.
    private static let patterns: [(NSRegularExpression, Kind, @Sendable ((Int) -> String?) -> String?)] = [
        (regex("(?:I|IH|INTERSTATE)(?: HIGHWAY| HWY)?" + separator + tail), .national, { g in number(g(1), g(2)).map { "I-" + $0 } }),
        (regex("(?:US|USA)(?: HIGHWAY| HWY| ROUTE| RTE)?" + separator + tail), .national, { g in number(g(1), g(2)).map { "US-" + $0 } }),
        (regex("(?:SR|STATE ROUTE|STATE RTE)" + separator + tail), .national, { g in number(g(1), g(2)).map { "SR-" + $0 } }),
        (regex("(?:SH|STATE HIGHWAY|STATE HWY)" + separator + tail), .national, { g in number(g(1), g(2)).map { "SH-" + $0 } }),
        (regex("(?:CR|COUNTY ROAD|COUNTY RD|COUNTY ROUTE|CO RD)" + separator + tail), .national, { g in number(g(1), g(2)).map { "CR-" + $0 } }),
        (regex("(" + stateCodes.sorted().joined(separator: "|") + ")(?: HIGHWAY| HWY| ROUTE| RTE)?" + separator + tail), .stateCode, { g in
            guard let state = g(1) else { return nil }
            return number(g(2), g(3)).map { state + "-" + $0 }
        }),
        // A highway named without its state or province ("Highway 14", "Hwy 1", "Highway No. 5"):
        // a road filter takes it for any state's or province's road of the number (equivalents).
        (regex("(?:HIGHWAY|HWY)(?: NO)?" + separator + tail), .national, { g in number(g(1), g(2)).map { "HWY-" + $0 } }),
        // Europe: a class of one or two letters, the number, a suffix letter, UK's "(M)" (a
        // motorway stretch of an A road: A1(M) is not the A1).
        (regex("(BAB|RN|RD|SS|ST|[ABDEKLMNRS])" + separator + #"(\d{1,4})([A-Z])?( ?\(M\))?"#), .european, { g in
            // Belgium's ring road round Brussels is the R0.
            guard let raw = g(1), let n = number(g(2), g(3), zero: true) else { return nil }
            let roadClass = ["BAB": "A", "RN": "N", "RD": "D", "ST": "S"][raw] ?? raw
            return roadClass + n + (g(4) == nil ? "" : "(M)")
        }),
        // Finland: valtatie (main road), kantatie, seututie, yhdystie, maantie, or just tie; the
        // number is the road (numbers are unique across the classes). Of the abbreviations only
        // kt and yt: vt and mt are Vermont and Montana above, st Germany's Staatsstraße.
        (regex(#"FI-(\d{1,5})"#), .finnish, { g in number(g(1), nil).map { "FI-" + $0 } }),
        (regex(#"(?:VALTATIE|KANTATIE|SEUTUTIE|YHDYSTIE|MAANTIE|TIE|KT|YT)(?: NRO| NUMERO)? ?(\d{1,5})"#), .finnish, { g in
            number(g(1), nil).map { "FI-" + $0 }
        }),
        // Spain's other classes: two to four letters, a hyphen, the number (AP-7 autopista,
        // CV-500 and GIV-5232 of a community or province). The hyphen is how they are written.
        (regex(#"([A-Z]{2,4})-(\d{1,4})"#), .lettered, { g in
            guard let letters = g(1), let n = number(g(2), nil) else { return nil }
            return letters + "-" + n
        }),
    ]

    /// The references a road filter also takes for `road` (a normal form): a state's or
    /// province's road of a number is the unqualified State Route or Highway of that number
    /// ("CA-1" is "SR-1" and "Highway 1" in a Californian feed; "BC-14" is "Highway 14"), and
    /// those are any state's or province's (a feed rarely says which state it is in); a highway
    /// named so may be a US route too ("Highway 101"). Every other road is only itself.
    static func equivalents(_ road: String) -> [String] {
        guard let dash = road.firstIndex(of: "-") else { return [road] }
        let prefix = String(road[..<dash]), number = String(road[road.index(after: dash)...])
        guard number.first?.isNumber == true else { return [road] }
        if stateCodes.contains(prefix) { return [road, "SR-" + number, "HWY-" + number] }
        // "Highway 101" may be the US-101: each finds the other.
        if prefix == "US" { return [road, "HWY-" + number] }
        guard prefix == "SR" || prefix == "HWY" else { return [road] }
        let unqualified = ["HWY-" + number, "SR-" + number] + (prefix == "HWY" ? ["US-" + number] : [])
        return [road] + unqualified.filter { $0 != road } + stateCodes.sorted().map { $0 + "-" + number }
    }

    // MARK: - Free text

    /// The first road reference of any scheme in free text whose first word starts before
    /// `limit` (a UTF-8 offset into the text), under the free-text rules above.
    static func firstInText(_ text: String, before limit: Int = .max) -> String? {
        guard limit > 0 else { return nil }
        // Every reference free text takes starts with a capital letter and has a digit: most
        // titles of an ingest ("incident 12", a German one whose road was found) have neither
        // before the limit, and are answered on their bytes.
        var capital = false, digit = false, other = false
        for (k, b) in text.utf8.enumerated() {
            if k >= limit { break }
            if b >= 0x41 && b <= 0x5A { capital = true } else if b >= 0x30 && b <= 0x39 { digit = true } else if b >= 0x80 { other = true }
            if capital && digit { break }
        }
        guard (capital || other) && digit else { return nil }
        let words = textWords(text, before: limit)
        guard !words.isEmpty else { return nil }
        for i in words.indices where words[i].startsReference {
            for k in stride(from: min(3, words.count - i), through: 1, by: -1) {
                let run = words[i..<(i + k)]
                guard run.last!.hasDigit, let found = match(run.map(\.text).joined(separator: " ")),
                      acceptableInText(found, run: run) else { continue }
                return found.road
            }
        }
        return nil
    }

    /// A word of free text: its text without the punctuation around it, and what it may be.
    struct TextWord {
        var text: Substring
        var start: Int
        var hasDigit: Bool { text.utf8.contains { $0 >= 0x30 && $0 <= 0x39 } }
        /// Written as a road's class is: a capital letter first ("M25", "I-87", "Interstate").
        var startsReference: Bool { text.first.map { $0.isUppercase && $0.isLetter } ?? false }
    }

    /// Words of the text that start before `limit`, split at white space and at "/" (a road
    /// named two ways: "Merritt Parkway/CT 15"), with the punctuation around them dropped; a
    /// closing "(M)" stays with its road.
    static func textWords(_ text: String, before limit: Int) -> [TextWord] {
        var words: [TextWord] = []
        var offset = 0
        var current: Substring.Index?
        var currentStart = 0
        let trimmable = Self.trimmable
        func finish(_ end: Substring.Index) {
            guard let begin = current else { return }
            current = nil
            var word = text[begin..<end]
            if word.hasSuffix("(M)") {
                // "A1(M)," stays "A1(M)"; its opening punctuation goes.
                while let f = word.unicodeScalars.first, trimmable.contains(f), word.count > 3 { word = word.dropFirst() }
            } else {
                // By its ends' scalars: Foundation's trimming is a UTF-16 round trip per word.
                while let f = word.unicodeScalars.first, trimmable.contains(f) { word = word.dropFirst() }
                while let l = word.unicodeScalars.last, trimmable.contains(l) { word = word.dropLast() }
                // A sentence's full stop, not a dot in "U.S.".
                while word.hasSuffix("."), word.filter({ $0 == "." }).count == 1 { word = word.dropLast() }
            }
            if !word.isEmpty { words.append(TextWord(text: word, start: currentStart)) }
        }
        var index = text.startIndex
        while index < text.endIndex {
            let c = text[index]
            if c.isWhitespace || c == "/" {
                finish(index)
            } else if current == nil {
                guard offset < limit else { break }
                current = index
                currentStart = offset
            }
            offset += c.utf8.count
            index = text.index(after: index)
            if words.count >= 256 { break }
        }
        finish(index)
        return words
    }

    private static let trimmable = CharacterSet(charactersIn: ",;:!?\"'“”‘’«»()[]").union(.whitespaces)

    /// Whether a reference read from these words of free text is one there (the rules above).
    static func acceptableInText(_ found: Match, run: ArraySlice<TextWord>) -> Bool {
        let first = run.first!.text
        let classLetters = first.prefix { $0.isLetter || $0 == "." }
        // The class in capitals, or a capitalised class word (Interstate 87, State Route 1, Valtatie 4).
        let capitalised = classLetters.count > 1 && classLetters.dropFirst().allSatisfy(\.isLowercase)
        guard classLetters.allSatisfy({ !$0.isLetter || $0.isUppercase }) || capitalised else { return false }
        let joined = run.map(\.text).joined(separator: " ").uppercased()
        let hyphenated = first.contains("-")
        switch found.kind {
        case .lettered:
            return false
        case .stateCode:
            return hyphenated || [" HIGHWAY ", " HWY ", " ROUTE ", " RTE "].contains { (joined + " ").contains($0) }
        case .european:
            // Germany's classes keep their rule (RoadReference.first's: "A 4" is the A4); other
            // one-letter classes need no space or a hyphen.
            let germanLetter = ["A", "B", "E", "K", "L", "S"].contains(String(classLetters))
            return germanLetter || run.count == 1
        case .national, .finnish:
            return true
        }
    }

    // MARK: - Road fields

    /// Every road reference in a feed's road field, in order: the whole field if it is one,
    /// else each part ("Merritt Parkway/CT 15": "CT 15"), else a reference inside a longer name
    /// ("I-87 Northway", "NY 3 (Main St)"). Names typed as fields are read as a person types
    /// them (any case, a state's code with a space).
    static func references(inField text: String) -> [String] {
        if let whole = normalize(text) { return [whole] }
        var found: [String] = []
        for part in fieldParts(text) {
            if let whole = normalize(part) { found.append(whole); continue }
            // "US 1&9", "I-35E/35W": a bare number after a reference is that road's scheme.
            if let last = found.last, let same = sameScheme(as: last, number: part) { found.append(same); continue }
            let words = textWords(part, before: .max)
            var i = words.startIndex
            while i < words.endIndex {
                var taken = 0
                for k in stride(from: min(3, words.count - i), through: 1, by: -1) {
                    let run = words[i..<(i + k)]
                    guard run.first!.text.first?.isLetter == true, run.last!.hasDigit,
                          let road = normalize(run.map(\.text).joined(separator: " ")) else { continue }
                    found.append(road)
                    taken = k
                    break
                }
                i += max(taken, 1)
            }
        }
        var seen: Set<String> = []
        return found.filter { seen.insert($0).inserted }
    }

    /// The road of `road`'s scheme with another number ("US-1" and "9": "US-9"), when `number`
    /// is only a number (with a letter after it, as "35W"); nil otherwise.
    static func sameScheme(as road: String, number: String) -> String? {
        let digits = number.prefix(while: \.isNumber)
        guard (1...4).contains(digits.count), number.dropFirst(digits.count).count <= 1,
              number.dropFirst(digits.count).allSatisfy({ $0.isLetter && $0.isASCII }) else { return nil }
        var prefix = Substring(road)
        while let c = prefix.last, c.isNumber || (c.isLetter && prefix.dropLast().last?.isNumber == true) { prefix = prefix.dropLast() }
        guard !prefix.isEmpty, prefix.count < road.count else { return nil }
        return normalize(prefix + number)
    }

    /// The parts of a road field that names a road several ways: "Merritt Parkway/CT 15",
    /// "I-80; I-35", "US 6 & SH 9".
    static func fieldParts(_ text: String) -> [String] {
        text.split(whereSeparator: { $0 == "/" || $0 == ";" || $0 == "&" || $0 == "," || $0 == "|" })
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}
