import Testing
@testable import TrafficGeoModel
@testable import TrafficGeoRoadTitles
@testable import TrafficGeoSupport
import TrafficGeoTestSupport

@Suite("Road references and categories")
struct RoadTitleTests {
    @Test(arguments: [("A4 : Koeln - Olpe", "A4"), ("A 4", "A4"), ("BAB 4 Köln", "A4"), ("B54 : Siegen", "B54"),
                      ("L 123", "L123"), ("E40 | Aachen", "E40"), ("A3 | Ratingen-Ost - Stindertal", "A3")])
    func findsRoad(text: String, road: String) {
        #expect(RoadReference.first(in: text) == road)
    }

    @Test func normalizeWantsTheWholeText() {
        #expect(RoadReference.normalize("A 4") == "A4")
        #expect(RoadReference.normalize("Köln") == nil)
        #expect(RoadReference.first(in: "Kreuz Köln-Ost") == nil)
    }

    @Test(arguments: [
        ("Achtung, Ihnen kommt ein Falschfahrer entgegen!", IncidentCategory.wrongWayDriver),
        ("Unfall, Stau 3 km", .accident),
        ("Gegenstaende auf der Fahrbahn", .obstacle),
        ("Baustelle, Fahrbahnverengung", .roadworks),
        ("Stau 2 km", .queue),
        ("Stockender Verkehr", .slowTraffic),
        ("Im Stillstand", .standstill),
        ("Vollsperrung", .closure),
        ("Gefahr durch Glatteis", .weather),
        // Words of the Autobahn API's texts that had no category (issue 15, point 8).
        ("Langsamer Verkehr", .slowTraffic), ("Wanderbaustelle", .roadworks), ("Tagesbaustelle auf dem linken Fahrstreifen", .roadworks),
        ("Bergungsarbeiten", .accident), ("Gefahr durch ein defektes Fahrzeug auf der Fahrbahn", .obstacle),
    ])
    func classifies(text: String, category: IncidentCategory) {
        #expect(CategoryClassifier.classify(text) == category)
    }

    /// Words of the feeds' languages (English, French, Dutch, Finnish, Swedish) where a feed
    /// gives only words, and texts that must not be read as a kind.
    @Test(arguments: [
        ("A7 : Fermeture complète entre Valence et Lyon", IncidentCategory?.some(.closure)),
        ("Route barrée suite à un éboulement", .closure), ("Accident sur l'A6 direction Paris", .accident),
        ("Bouchon de 5 km à la sortie 12", .queue), ("Ralentissement au niveau de l'échangeur", .slowTraffic),
        ("Travaux de nuit, voie de gauche neutralisée", .roadworks), ("Véhicule en panne sur la BAU", .obstacle),
        ("Verglas signalé sur la RN7", .weather), ("Automobiliste à contresens sur l'A4", .wrongWayDriver),
        ("A2 Utrecht richting Amsterdam: ongeval, 2 rijstroken dicht", .accident), ("A12 afgesloten tussen Ede en Arnhem", .closure),
        ("Spookrijder op de A28", .wrongWayDriver), ("Werkzaamheden op de A1", .roadworks), ("File van 4 km op de A10", .queue),
        ("Tie 4, Kemi: liikenneonnettomuus", .accident), ("Tie 4, Kemi: onnettomuus", .accident), ("Valtatie 3 suljettu", .closure),
        ("Tietyö Tampereella", .roadworks), ("Ruuhka kehä I:llä", .queue),
        ("E4 Stockholm: trafikolycka", .accident), ("Vägarbete på E6", .roadworks), ("Väg 40 avstängd", .closure),
        ("Congestion – M1 southbound between J29A and J30", .queue), ("I-25 northbound: right lane closed", .closure),
        // Not kinds: a file of the feed, a town, a word that begins like one.
        ("Feed files updated", nil), ("AS Staufenberg", nil), ("Ferme de la Vallée", nil), ("Vaaraniemi", nil), ("Tiellä vaarallinen este", .danger),
    ] as [(String, IncidentCategory?)])
    func classifiesTheFeedsLanguages(text: String, category: IncidentCategory?) {
        #expect(CategoryClassifier.classify(text) == category, "\(text)")
    }

    @Test func stauMustBeAWord() {
        #expect(CategoryClassifier.classify("AS Staufenberg") == nil)
    }

    /// The one-pass keyword search finds the same rule as trying every keyword everywhere.
    @Test func keywordSearchMatchesTheRule() {
        let pieces = ["stau", "stau ", "Stauende", "unfall", "Sperrung", "gesperrt", "ice", "wrong", " way", "fog", "gefahr",
                      "Glätte", "queue", "road", " works", "x", " ", "  ", "-", "ä", "ss", "a", "fen", "berg"]
        var generator = SplitMix64(seed: 11)
        var found = 0
        for _ in 0..<20_000 {
            let text = (0..<Int.random(in: 1...8, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            let folded = Array(TextFolding.fold(text).utf8) + [0x20]
            let expected = Self.firstRuleByScanning(folded)
            #expect(CategoryClassifier.firstRule(matching: folded) == expected, "\(text.debugDescription)")
            // Unfolded bytes too: double spaces and a leading space must not change the answer.
            let raw = Array(text.utf8) + [0x20]
            #expect(CategoryClassifier.firstRule(matching: raw) == Self.firstRuleByScanning(raw), "\(text.debugDescription)")
            if expected != nil { found += 1 }
        }
        #expect(found > 5000)
    }

    /// The byte pre-check never hides a German road the regular expression finds, and the ASCII
    /// matcher agrees with it everywhere.
    @Test func preCheckKeepsEveryMatch() {
        let pieces = ["A", "B", "L", "S", "St", "K", "E", "BAB", "BA", "t", "x", "z", "Z", " ", "\u{00A0}", "\u{2009}", "\t", "\n", "\r",
                      "\u{0B}", "\u{0C}", "\u{1F}", "4", "54", "123", "0", "00", "98765", "٤", "a", "ö", "-", ":", "_"]
        var generator = SplitMix64(seed: 9)
        var found = 0
        for _ in 0..<40_000 {
            let text = (0..<Int.random(in: 1...8, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            let expected = RoadReference.firstMatch(in: text)
            #expect(RoadReference.firstGerman(in: text)?.road == expected, "\(text.debugDescription)")
            if expected != nil { found += 1 }
        }
        #expect(found > 1000)
        #expect(!RoadReference.mayContainReference("incident 123") && RoadReference.firstGerman(in: "incident 123") == nil)
    }

    /// The classifier's rule stated plainly: every keyword tried at every word start, in rule order.
    static func firstRuleByScanning(_ text: [UInt8]) -> Int? {
        for (rule, (_, words)) in CategoryClassifier.rules.enumerated() {
            for word in words {
                let keyword = CategoryClassifier.foldedKeyword(word)
                guard keyword.count <= text.count else { continue }
                for i in 0...(text.count - keyword.count) where i == 0 || text[i - 1] == 0x20 {
                    if Array(text[i..<(i + keyword.count)]) == keyword { return rule }
                }
            }
        }
        return nil
    }
}
