import Foundation

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
        var message = TrafficMessage()
        let title = title.normalizedWhitespace
        let text = (text ?? "").normalizedWhitespace
        message.road = RoadReference.first(in: title) ?? RoadReference.first(in: text)
        message.category = CategoryClassifier.classify(title, text)

        // "A4: Olpe -> Köln, ..." in the text gives the direction of travel.
        if let route = directedRoute(in: text) {
            message.routeEnds = route
            message.isDirected = true
        }
        parseJunctions(text, into: &message)
        if message.from == nil, let route = directedRoute(in: title) {
            message.routeEnds = route
            message.isDirected = true
        }
        let titleNames = titlePlaces(title)
        // The Autobahn API writes "A4 | Krombach - Wenden": with "|" the two names are the junctions.
        if message.from == nil, message.to == nil, titleNames.count == 2, title.contains("|") {
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
        let lower = text.lowercased()
        message.bothDirections = lower.contains("beiden richtungen") || lower.contains("beide richtungen")
        message.kilometrePosts = kilometrePosts(in: text)
        return message
    }

    // MARK: - Pieces

    private static let routeArrow = try! NSRegularExpression(
        pattern: #"(?:^|[:,|]\s*)([^:,|>]+?)\s*-{1,2}>\s*([^,|]+?)\s*(?:,|$|\s(?=zwischen|Zwischen|\d))"#)

    /// "Olpe -> Köln" (after a road reference or at the start); not "km 9.14 --> km 0.43".
    static func directedRoute(in text: String) -> [String]? {
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

    private static let offsetPattern = try! NSRegularExpression(pattern: #"^(\d+(?:[.,]\d+)?)\s*km\s+(hinter|vor|nach|nördlich|südlich|östlich|westlich)\s+"#, options: [.caseInsensitive])

    /// Reads "zwischen [N km hinter] X und [N km vor] Y", "N km vor X, aus Richtung Z", "bei/an der/Höhe AS X".
    static func parseJunctions(_ text: String, into message: inout TrafficMessage) {
        let lower = text.lowercased()
        if let r = lower.range(of: "zwischen ") {
            let rest = String(text[r.upperBound...])
            if let (first, afterFirst) = mention(at: Substring(rest)) {
                message.from = first
                let tail = afterFirst.drop(while: { $0 == " " })
                if tail.lowercased().hasPrefix("und "), let (second, _) = mention(at: tail.dropFirst(4)) {
                    message.to = second
                    if message.to?.relation == .at { message.to?.relation = .before }
                }
                if message.from?.relation == .at { message.from?.relation = .after }
                return
            }
        }
        // A single junction with an offset: "1.8 km vor AS Oberhausen-Königshardt, aus Richtung Oberhausen".
        let range = NSRange(text.startIndex..., in: text)
        let single = try! NSRegularExpression(pattern: #"\d+(?:[.,]\d+)?\s*km\s+(?:hinter|vor|nach)\s"#, options: [.caseInsensitive])
        if let m = single.firstMatch(in: text, range: range), let r = Range(m.range, in: text),
           let (j, _) = mention(at: text[r.lowerBound...]) {
            message.from = j
        } else {
            for marker in ["Höhe ", "Hoehe ", "bei ", "an der ", "in Höhe ", "auf Höhe "] {
                if let r = text.range(of: marker), let (j, _) = mention(at: text[r.upperBound...]), j.kind != .unspecified {
                    message.from = j
                    break
                }
            }
        }
        if let r = text.range(of: "aus Richtung ") {
            message.comingFrom = cleanPlace(String(text[r.upperBound...].prefix(while: { $0 != "," }).prefix(80)))
            message.comingFrom = message.comingFrom.map { terminateName(Substring($0)) }
        }
    }

    /// A junction mention at the start of `s`: optional offset, optional junction word, the name.
    static func mention(at s: Substring) -> (JunctionMention, Substring)? {
        var rest = s.drop(while: { $0 == " " })
        var offset: Double?
        var relation = JunctionMention.Relation.at
        let ns = String(rest)
        if let m = offsetPattern.firstMatch(in: ns, range: NSRange(ns.startIndex..., in: ns)),
           let numberRange = Range(m.range(at: 1), in: ns), let wordRange = Range(m.range(at: 2), in: ns), let whole = Range(m.range, in: ns) {
            offset = Double(ns[numberRange].replacingOccurrences(of: ",", with: "."))
            relation = ns[wordRange].lowercased() == "vor" ? .before : .after
            rest = rest.dropFirst(ns.distance(from: ns.startIndex, to: whole.upperBound))
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
    static func terminateName(_ s: Substring) -> String {
        var end = s.endIndex
        for t in nameTerminators {
            if let r = s.range(of: t), r.lowerBound < end { end = r.lowerBound }
        }
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
        var t = s.trimmingCharacters(in: CharacterSet.whitespaces.union(CharacterSet(charactersIn: ",.;:")))
        if let road = RoadReference.first(in: t), t.hasPrefix(road + ":") || t.hasPrefix(road + " ") { t = String(t.dropFirst(road.count + 1)).trimmingCharacters(in: .whitespaces) }
        return t
    }

    private static let kmPostPattern = try! NSRegularExpression(pattern: #"km\s+(\d+(?:[.,]\d+)?)\s*-{1,2}>\s*km\s+(\d+(?:[.,]\d+)?)"#)

    static func kilometrePosts(in text: String) -> [Double] {
        guard let m = kmPostPattern.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)),
              let a = Range(m.range(at: 1), in: text), let b = Range(m.range(at: 2), in: text) else { return [] }
        return [text[a], text[b]].compactMap { Double($0.replacingOccurrences(of: ",", with: ".")) }
    }
}
