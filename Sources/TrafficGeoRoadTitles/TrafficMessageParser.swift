import Foundation
import TrafficGeoSupport

/// Parses German traffic-message titles and texts into a `TrafficMessage`.
///
/// Handles the shapes of the Autobahn GmbH API and the freiefahrt.info feeds:
///
///     A4 : Koeln - Olpe  /  Zwischen AS Wenden und AS Krombach in beiden Richtungen ...
///     A4 | Krombach - Wenden  /  A4: Olpe -> Köln, zwischen 0.2 km hinter AS Krombach und 0.5 km vor AS Wenden ...
///     A3: Nürnberg -> Passau, 0.6 km vor AS Metten, aus Richtung Offenberg ...
///     A261: km 9.14 --> km 0.43 ...
///
/// Umlauts may be spelled out (Koeln, ueberholen); junction words are AS/Anschlussstelle/Ausfahrt,
/// AK/Kreuz/Autobahnkreuz, AD/Dreieck/Autobahndreieck.
public enum TrafficMessageParser {
    public static func parse(title: String, text: String?) -> TrafficMessage {
        parse(title: title, text: text, complete: true)
    }

    /// The road and the junction mentions only, as learning junction positions needs them: no
    /// category, direction words or kilometre posts, and route ends only where the junctions
    /// depend on them. The same road and junctions as `parse`, in a fraction of the time (ingest
    /// reads every positioned message this way).
    public static func parseJunctions(title: String, text: String?) -> TrafficMessage {
        parse(title: title, text: text, complete: false)
    }

    static func parse(title: String, text: String?, complete: Bool) -> TrafficMessage {
        var message = TrafficMessage()
        let title = title.normalizedWhitespace
        let text = (text ?? "").normalizedWhitespace
        message.road = RoadReference.first(in: title) ?? RoadReference.first(in: text)
        if complete { message.category = CategoryClassifier.classify(title, text) }

        // "A4: Olpe -> Köln, ..." in the text gives the direction of travel.
        if complete, let route = directedRoute(in: text) {
            message.routeEnds = route
            message.isDirected = true
        }
        parseJunctions(text, into: &message)
        // Without junctions in the text the title's names are read by the route (below).
        if !complete, message.from == nil, let route = directedRoute(in: text) {
            message.routeEnds = route
            message.isDirected = true
        }
        if message.from == nil, let route = directedRoute(in: title) {
            message.routeEnds = route
            message.isDirected = true
        }
        // Learning needs no more once the text named both junctions.
        if !complete, message.from != nil, message.to != nil { return message }
        let titleNames = titlePlaces(title)
        // The Autobahn API writes "A4 | Krombach - Wenden": with "|" the two names are the junctions.
        if message.from == nil, message.to == nil, titleNames.count == 2, title.utf8.contains(UInt8(ascii: "|")) {
            message.from = JunctionMention(name: titleNames[0], kind: .unspecified, relation: .after)
            message.to = JunctionMention(name: titleNames[1], kind: .unspecified, relation: .before)
        }
        if message.from == nil, message.to == nil, titleNames.count == 2, message.routeEnds.isEmpty {
            // Only the title says where: two names are route ends ("A4 : Koeln - Olpe").
            message.routeEnds = titleNames
        } else if titleNames.count == 2, !message.routeEnds.isEmpty || message.from != nil {
            // Title names that are not the junctions of the text are route ends (freiefahrt style);
            // when they are the junctions ("A4 | Krombach - Wenden"), the text already has them.
            let junctions = [message.from?.name, message.to?.name].compactMap { $0 }.map(TextFolding.fold)
            let titleFolded = titleNames.map(TextFolding.fold)
            if message.routeEnds.isEmpty && !titleFolded.contains(where: { junctions.contains($0) }) {
                message.routeEnds = titleNames
            }
            // A title pair that names the junctions but the text had none: take them from the title.
            if message.from == nil && message.to == nil && message.routeEnds != titleNames {
                message.from = JunctionMention(name: titleNames[0], kind: .unspecified)
                message.to = JunctionMention(name: titleNames[1], kind: .unspecified)
            }
        }
        guard complete else { return message }
        let lower = text.lowercased()
        message.bothDirections = lower.utf8Contains("beiden richtungen") || lower.utf8Contains("beide richtungen")
        message.kilometrePosts = kilometrePosts(in: text)
        return message
    }

    // MARK: - Pieces

    private static let routeArrow = try! NSRegularExpression(
        // An en dash ends a place too: readers join a message's parts with " – " (Autobahn
        // subtitle – description), and no place name has one.
        pattern: #"(?:^|[:,|–]\s*)([^:,|>–]+?)\s*-{1,2}>\s*([^,|–]+?)\s*(?:,|$|–|\s(?=zwischen|Zwischen|\d))"#)

    /// "Olpe -> Köln" (after a road reference or at the start); not "km 9.14 --> km 0.43".
    static func directedRoute(in text: String) -> [String]? {
        // The regex backtracks over the whole text; most texts have no arrow at all, and where
        // one is, the route lies within a sentence of it (learning parses every feed message).
        guard let arrow = text.utf8Range(of: "->") else { return nil }
        let windowStart = text.index(arrow.lowerBound, offsetBy: -120, limitedBy: text.startIndex) ?? text.startIndex
        let windowEnd = text.index(arrow.upperBound, offsetBy: 160, limitedBy: text.endIndex) ?? text.endIndex
        var start = windowStart
        if windowStart > text.startIndex {
            // Begin at a separator the pattern can anchor on, not inside a word.
            start = text[windowStart..<arrow.lowerBound].firstIndex(where: { $0 == ":" || $0 == "," || $0 == "|" || $0 == "–" }) ?? windowStart
        }
        let text = String(text[start..<windowEnd])
        let range = NSRange(text.startIndex..., in: text)
        for m in routeArrow.matches(in: text, range: range) {
            guard let a = Range(m.range(at: 1), in: text), let b = Range(m.range(at: 2), in: text) else { continue }
            let from = cleanPlace(String(text[a])), to = cleanPlace(String(text[b]))
            if from.isEmpty || to.isEmpty || from.lowercased().hasPrefix("km ") || to.lowercased().hasPrefix("km ") { continue }
            return [from, to]
        }
        return nil
    }

    /// The two names of a title "A4 : Koeln - Olpe" / "A4 | Krombach - Wenden" (separator " - ").
    static func titlePlaces(_ title: String) -> [String] {
        var rest = Substring(title)
        if let sep = rest.firstIndex(where: { $0 == ":" || $0 == "|" }) {
            let head = rest[..<sep]
            guard RoadReference.first(in: String(head)) != nil else { return [] }
            rest = rest[rest.index(after: sep)...]
        } else if let road = RoadReference.first(in: title), title.hasPrefix(road) || title.replacingOccurrences(of: " ", with: "").hasPrefix(road) {
            rest = rest.drop(while: { !$0.isWhitespace })
        } else {
            return []
        }
        let parts = rest.components(separatedBy: " - ").map { cleanPlace($0) }.filter { !$0.isEmpty }
        return parts.count == 2 ? parts : []
    }

    private static let junctionWords: [(String, JunctionMention.Kind)] = [
        ("Anschlussstelle", .exit), ("Ausfahrt", .exit), ("AS", .exit), ("Autobahnkreuz", .interchange), ("AK", .interchange),
        ("Kreuz", .interchange), ("Autobahndreieck", .triangle), ("AD", .triangle), ("Dreieck", .triangle),
    ]

    /// Words that end a junction name: the event text, a direction, punctuation.
    private static let nameTerminators: [String] = [
        " und ", ",", ";", " in beiden Richtungen", " beide Richtungen", " in Richtung", " Richtung ", " aus Richtung",
        " Langsamer Verkehr", " Stockender Verkehr", " stockender Verkehr", " Im Stillstand", " im Stillstand", " Gefahr", " Stau",
        " Unfall", " Baustelle", " Reisezeitverlust", " Durchschnittsgeschwindigkeit", " Achtung", " Vorsicht", " gesperrt",
        " Sperrung", " Vollsperrung", " Verkehrsbehinderung", " Fahrbahn", " Falschfahrer", " Nicht ", " wegen ", " zwischen ",
        " bis ", " Höhe ", " Hoehe ", " Dauerbaustelle", " Tagesbaustelle", " Wanderbaustelle", " Bauarbeiten", " Gegenstände",
        " Gegenstaende", " Glätte", " Nebel", " defektes", " Pannenfahrzeug", " Person", " Tiere", " Verkehrsstörung",
        " Behinderung", " linker", " rechter", " mittlerer", " Fahrstreifen", " Standstreifen", " Ihnen", " Es ", " Der ", " Die ", " Das ",
        " Verkehr ", " Zufahrt", " Ausfahrt gesperrt", ". ", "!", "?", " (",
    ]

    private static let singleOffset = try! NSRegularExpression(pattern: #"\d+(?:[.,]\d+)?\s*km\s+(?:hinter|vor|nach)\s"#, options: [.caseInsensitive])

    /// The terminators, found in one pass over a name's bytes: Foundation's `range(of:)` per
    /// terminator was four fifths of parsing a message.
    private static let terminators = ByteNeedles(nameTerminators)

    /// The first byte-exact occurrence of `needle` in `s`.
    static func firstRange(of needle: String, in s: Substring) -> Range<String.Index>? {
        let n = Array(needle.utf8)
        guard let first = n.first else { return nil }
        let bytes = s.utf8
        var i = bytes.startIndex
        while let start = bytes[i...].firstIndex(of: first) {
            var j = start, k = 0
            while k < n.count, j < bytes.endIndex, bytes[j] == n[k] { j = bytes.index(after: j); k += 1 }
            if k == n.count { return start..<j }
            i = bytes.index(after: start)
        }
        return nil
    }

    /// Where the first terminator starts in `s`, else its end.
    static func firstTerminator(in s: Substring) -> String.Index {
        terminators.firstMatch(in: s) ?? s.endIndex
    }

    static let offsetWords: Set<String> = ["hinter", "vor", "nach", "nördlich", "südlich", "östlich", "westlich"]

    /// "2.0 km hinter " at the start of `s` (any case; `,` as decimal mark too): the distance, the
    /// direction word lower-cased, and what follows. By hand over the bytes: the regex it replaces
    /// was a fifth of a parse.
    static func leadingOffset(_ s: Substring) -> (Double, String, Substring)? {
        let u = s.utf8
        var i = u.startIndex
        func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }
        func isSpace(_ b: UInt8) -> Bool { b == 0x20 || (b >= 0x09 && b <= 0x0D) }
        var number: [UInt8] = []
        while i < u.endIndex, isDigit(u[i]) { number.append(u[i]); i = u.index(after: i) }
        guard !number.isEmpty else { return nil }
        if i < u.endIndex, u[i] == UInt8(ascii: ".") || u[i] == UInt8(ascii: ",") {
            let j = u.index(after: i)
            if j < u.endIndex, isDigit(u[j]) {
                number.append(UInt8(ascii: "."))
                i = j
                while i < u.endIndex, isDigit(u[i]) { number.append(u[i]); i = u.index(after: i) }
            }
        }
        while i < u.endIndex, isSpace(u[i]) { i = u.index(after: i) }
        guard i < u.endIndex, u[i] | 0x20 == UInt8(ascii: "k") else { return nil }
        i = u.index(after: i)
        guard i < u.endIndex, u[i] | 0x20 == UInt8(ascii: "m") else { return nil }
        i = u.index(after: i)
        guard i < u.endIndex, isSpace(u[i]) else { return nil }
        while i < u.endIndex, isSpace(u[i]) { i = u.index(after: i) }
        let wordStart = i
        while i < u.endIndex, !isSpace(u[i]) { i = u.index(after: i) }
        guard i < u.endIndex else { return nil }   // the word must be followed by a space
        let word = String(s[wordStart..<i]).lowercased()
        guard offsetWords.contains(word), let km = Double(String(decoding: number, as: UTF8.self)) else { return nil }
        while i < u.endIndex, isSpace(u[i]) { i = u.index(after: i) }
        return (km, word, s[i...])
    }

    /// Reads "zwischen [N km hinter] X und [N km vor] Y", "N km vor X, aus Richtung Z", "bei/an der/Höhe AS X".
    static func parseJunctions(_ text: String, into message: inout TrafficMessage) {
        if let r = firstRange(of: "wischen ", in: text[...]).flatMap({ r -> Range<String.Index>? in
            // "zwischen"/"Zwischen" (lowercasing the whole text first was a tenth of a parse).
            guard r.lowerBound > text.startIndex else { return nil }
            let z = text.index(before: r.lowerBound)
            return text[z] == "z" || text[z] == "Z" ? z..<r.upperBound : nil
        }) {
            if let (first, afterFirst) = mention(at: text[r.upperBound...]) {
                message.from = first
                let tail = afterFirst.drop(while: { $0 == " " })
                if tail.prefix(4).lowercased() == "und ", let (second, _) = mention(at: tail.dropFirst(4)) {
                    message.to = second
                    if message.to?.relation == .at { message.to?.relation = .before }
                }
                if message.from?.relation == .at { message.from?.relation = .after }
                return
            }
        }
        // A single junction with an offset: "1.8 km vor AS Oberhausen-Königshardt, aus Richtung Oberhausen".
        let range = NSRange(text.startIndex..., in: text)
        if text.utf8Contains(" km "), let m = singleOffset.firstMatch(in: text, range: range), let r = Range(m.range, in: text),
           let (j, _) = mention(at: text[r.lowerBound...]) {
            message.from = j
        } else {
            for marker in ["Höhe ", "Hoehe ", "bei ", "an der ", "in Höhe ", "auf Höhe "] {
                if let r = text.utf8Range(of: marker), let (j, _) = mention(at: text[r.upperBound...]), j.kind != .unspecified {
                    message.from = j
                    break
                }
            }
        }
        if let r = text.utf8Range(of: "aus Richtung ") {
            message.comingFrom = cleanPlace(String(text[r.upperBound...].prefix(while: { $0 != "," }).prefix(80)))
            message.comingFrom = message.comingFrom.map { terminateName(Substring($0)) }
        }
    }

    /// A junction mention at the start of `s`: optional offset, optional junction word, the name.
    static func mention(at s: Substring) -> (JunctionMention, Substring)? {
        var rest = s.drop(while: { $0 == " " })
        var offset: Double?
        var relation = JunctionMention.Relation.at
        if let (km, word, after) = leadingOffset(rest) {
            offset = km
            relation = word == "vor" ? .before : .after
            rest = after
        }
        var kind = JunctionMention.Kind.unspecified
        for (word, k) in junctionWords where rest.hasPrefix(word + " ") {
            kind = k
            rest = rest.dropFirst(word.count + 1)
            break
        }
        let name = terminateName(rest)
        guard !name.isEmpty, name.count <= 80 else { return nil }
        // "Kreuz"/"Dreieck" kept in a name such as "AD Kreuz Uckermark" is a name, not a second kind word.
        return (JunctionMention(name: name, kind: kind, offsetKm: offset, relation: relation), rest.dropFirst(name.count))
    }

    /// The name up to the first terminator (event text, direction, punctuation).
    static func terminateName(_ whole: Substring) -> String {
        // A name is at most 80 characters (longer ones are refused): look no further than that,
        // plus room for a terminator that starts at the 80th.
        let s = whole.prefix(120)
        var end = firstTerminator(in: s)
        // A road reference starts the next sentence (the Autobahn API's description lines run
        // together: "… 1.0 km vor Kohlhof A8 Saarlouis - Neunkirchen …").
        if let r = roadReferenceWord(in: s[..<end]) { end = r }
        // Keep a parenthesised part of the name: "Kirchheim (Teck)-Ost", "Fürholzen (West)".
        if end < s.endIndex, s[end...].hasPrefix(" ("), let close = s[end...].firstIndex(of: ")") {
            let extended = s[..<s.index(after: close)]
            let tail = s[s.index(after: close)...]
            let more = terminateName(tail)
            return cleanPlace(String(extended) + (tail.first == "-" || tail.first == "/" ? more : ""))
        }
        return cleanPlace(String(s[..<end]))
    }

    /// The start of the first " A8 " / " B54 " word (a letter of A, B, E, K, L, S and 1–4 digits).
    static func roadReferenceWord(in s: Substring) -> String.Index? {
        var i = s.startIndex
        while let space = s[i...].firstIndex(of: " ") {
            var j = s.index(after: space)
            guard j < s.endIndex else { return nil }
            if "ABEKLS".contains(s[j]) {
                j = s.index(after: j)
                var digits = 0
                while j < s.endIndex, s[j].isASCII, s[j].isNumber { digits += 1; j = s.index(after: j) }
                if (1...4).contains(digits), j == s.endIndex || s[j] == " " || s[j] == ":" { return space }
            }
            i = s.index(after: space)
        }
        return nil
    }

    static func cleanPlace(_ s: String) -> String {
        var t = trimPlace(s[...], also: ",.;:")
        if let first = t.first, "ABEKLS".contains(first), let road = RoadReference.first(in: t), t.hasPrefix(road + ":") || t.hasPrefix(road + " ") {
            t = trimPlace(t.dropFirst(road.count + 1), also: "")
        }
        return t
    }

    /// Trims whitespace and the given punctuation from both ends (what CharacterSet trimming did,
    /// without Foundation's cost).
    private static func trimPlace(_ s: Substring, also punctuation: String) -> String {
        func trimmed(_ c: Character) -> Bool { c.isWhitespace || punctuation.contains(c) }
        guard let start = s.firstIndex(where: { !trimmed($0) }) else { return "" }
        let end = s.lastIndex(where: { !trimmed($0) })!
        return String(s[start...end])
    }

    private static let kmPostPattern = try! NSRegularExpression(pattern: #"km\s+(\d+(?:[.,]\d+)?)\s*-{1,2}>\s*km\s+(\d+(?:[.,]\d+)?)"#)

    public static func kilometrePosts(in text: String) -> [Double] {
        guard text.utf8.contains(UInt8(ascii: ">")), let m = kmPostPattern.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)),
              let a = Range(m.range(at: 1), in: text), let b = Range(m.range(at: 2), in: text) else { return [] }
        return [text[a], text[b]].compactMap { Double($0.replacingOccurrences(of: ",", with: ".")) }
    }
}
