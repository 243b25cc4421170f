import Foundation
import TrafficGeoModel
import TrafficGeoSupport

/// Infers the kind of event from the words of a traffic message, for feeds that give only words
/// (Atom, RSS, CSV, GeoJSON titles): German, English, French, Dutch, Finnish, Swedish and Spanish
/// (docs/feeds.md has the table).
///
///     CategoryClassifier.classify("Achtung, Ihnen kommt ein Falschfahrer entgegen!") // .wrongWayDriver
///     CategoryClassifier.classify("A7 : Fermeture complète entre Valence et Lyon")    // .closure
///
/// Rules are tried in order of severity so that "Unfall, Stau" is an accident, not a queue. A
/// keyword matches at the start of a word (so compounds such as "Unfallstelle" count) in the
/// folded text (so "Gegenstaende" and "Gegenstände" are the same word); one that ends in a space
/// matches the whole word only ("stau " is not "Staufenberg", "file " not "Filet").
public enum CategoryClassifier {
    static let rules: [(IncidentCategory, [String])] = [
        (.wrongWayDriver, ["falschfahrer", "geisterfahrer", "wrong-way", "wrong way",
                           "contresens", "spookrijder", "spökbilist", "väärään suuntaan"]),
        (.accident, ["unfall", "unfälle", "verunglückt", "bergungsarbeiten", "bergung", "accident", "crash", "collision",
                     "carambolage", "ongeval", "ongeluk", "aanrijding", "onnettomuus", "liikenneonnettomuus", "kolari", "olycka", "trafikolycka",
                     "accidente", "colisión", "choque"]),
        (.closure, ["gesperrt", "sperrung", "vollsperrung", "closed", "closure",
                    "fermeture", "fermée", "route barrée", "route coupée", "afgesloten", "afsluiting",
                    "suljettu", "suljetaan", "avstängd", "avstängning", "cortada", "cortado", "corte total", "cierre"]),
        (.obstacle, ["gegenstände", "gegenstand", "hindernis", "ladung verloren", "verlorene ladung",
                     "tiere auf der fahrbahn", "pannenfahrzeug", "liegengebliebenes fahrzeug", "defektes fahrzeug", "defekter lkw", "debris", "obstacle", "obstruction",
                     "véhicule en panne", "objet sur la chaussée", "animal sur la chaussée", "pechgeval", "voorwerp op de weg", "obstakel",
                     "este tiellä", "hinder på vägen", "fordon med motorstopp", "obstáculo", "vehículo averiado", "avería"]),
        // Compounds name most roadworks in the Autobahn API's texts: a keyword matches at a word start only.
        (.roadworks, ["baustelle", "bauarbeiten", "arbeitsstelle", "fahrbahnerneuerung", "wanderbaustelle", "tagesbaustelle",
                      "dauerbaustelle", "nachtbaustelle", "tagesbaustellen", "roadworks", "road works", "construction",
                      "travaux", "chantier", "werkzaamheden", "wegwerkzaamheden", "tietyö", "vägarbete", "vägarbeten",
                      "work zone", "roadwork", "road work", "obras", "mantenimiento"]),
        (.standstill, ["stillstand", "standstill", "stehender verkehr", "circulation arrêtée", "stilstaand verkeer", "pysähtynyt liikenne", "stillastående trafik"]),
        // "stau" alone would match "Staufenberg": only the word and its traffic compounds.
        (.queue, ["stau ", "staugefahr", "stauende", "staulänge", "queue", "traffic jam", "congestion",
                  "bouchon", "embouteillage", "file ", "filevorming", "ruuhka", "jono ", "bilkö", "retención", "retenciones", "atasco"]),
        (.slowTraffic, ["stockender verkehr", "langsamer verkehr", "zähfließend", "slow traffic", "angespannte verkehrslage",
                        "ralentissement", "circulation ralentie", "langzaam rijdend verkeer", "hidas liikenne", "hidasta liikennettä", "långsam trafik"]),
        (.weather, ["glätte", "glatteis", "schnee", "nebel", "sturm", "aquaplaning", "ice", "fog", "snow",
                    "verglas", "neige", "brouillard", "tempête", "gladheid", "ijzel", "sneeuw", "liukas", "lumi ", "sumu", "halka", "snöfall", "dimma",
                    "niebla", "nieve", "hielo", "meteorológico", "meteorologico"]),
        (.danger, ["gefahr", "achtung", "danger", "hazard", "warning", "attention", "gevaar", "vaara ", "vaarallinen", "fara ", "peligro"]),
    ]

    /// Every keyword folded like the text, as bytes, with the index of its rule; listed under its
    /// first byte so that a word start is compared only with the keywords that can begin there.
    private static let keywordsByFirstByte: [[(rule: Int, bytes: [UInt8])]] = {
        var table = [[(rule: Int, bytes: [UInt8])]](repeating: [], count: 256)
        for (rule, (_, words)) in rules.enumerated() {
            for word in words {
                let bytes = foldedKeyword(word)
                if let first = bytes.first { table[Int(first)].append((rule, bytes)) }
            }
        }
        return table
    }()

    public static func classify(_ texts: String?...) -> IncidentCategory? {
        let text = folded(texts)
        guard !text.isEmpty, let rule = firstRule(matching: text) else { return nil }
        return rules[rule].0
    }

    /// The lowest rule index with a keyword at a word start of `text`.
    static func firstRule(matching text: [UInt8]) -> Int? {
        var best = Int.max
        forEachRule(matching: text, below: { best }) { best = min(best, $0) }
        return best == Int.max ? nil : best
    }

    /// Every kind the words name ("Unfall, Stau": accident and queue), not only the most severe:
    /// two reports of one event may each lead with another of them (`EventMerger`).
    public static func allCategories(_ texts: String?...) -> Set<IncidentCategory> {
        let text = folded(texts)
        var found: Set<IncidentCategory> = []
        forEachRule(matching: text, below: { Int.max }) { found.insert(rules[$0].0) }
        return found
    }

    /// The texts folded into one, with a trailing space (so that whole-word keywords match at
    /// the very end too); empty when there is no text.
    private static func folded(_ texts: [String?]) -> [UInt8] {
        var text: [UInt8] = []
        text.reserveCapacity(texts.reduce(1) { $0 + ($1?.utf8.count ?? 0) + 1 })
        for case let part? in texts { TextFolding.append(part, to: &text) }
        if !text.isEmpty { text.append(0x20) }
        return text
    }

    /// Calls `found` with the index of each rule that has a keyword at a word start of `text`
    /// (folded: words are separated by single spaces), among the rules below `limit()`. One
    /// pass over the text; ingest classifies every entry.
    static func forEachRule(matching text: [UInt8], below limit: () -> Int, found: (Int) -> Void) {
        text.withUnsafeBufferPointer { text in
            var i = 0
            while i < text.count {
                for keyword in keywordsByFirstByte[Int(text[i])] where keyword.rule < limit() && keyword.bytes.count <= text.count - i {
                    let matches = keyword.bytes.withUnsafeBufferPointer { k in
                        var j = 1
                        while j < k.count, text[i + j] == k[j] { j += 1 }
                        return j == k.count
                    }
                    if matches { found(keyword.rule) }
                }
                // On to the next word start.
                while i < text.count, text[i] != 0x20 { i += 1 }
                i += 1
            }
        }
    }

    /// A keyword folded like the text, as bytes. A trailing space means "the whole word": it is
    /// kept after folding.
    static func foldedKeyword(_ word: String) -> [UInt8] {
        Array((TextFolding.fold(word) + (word.hasSuffix(" ") ? " " : "")).utf8)
    }
}
