import Testing
@testable import TrafficGeo

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
    ])
    func classifies(text: String, category: IncidentCategory) {
        #expect(CategoryClassifier.classify(text) == category)
    }

    @Test func stauMustBeAWord() {
        #expect(CategoryClassifier.classify("AS Staufenberg") == nil)
    }

    /// The byte pre-check never hides a road the regular expression finds.
    @Test func preCheckKeepsEveryMatch() {
        let pieces = ["A", "B", "L", "S", "St", "K", "E", "BAB", "t", "x", " ", "\u{00A0}", "\u{2009}", "\t", "4", "54", "123", "a", "ö", "-", ":"]
        var generator = SplitMix64(seed: 9)
        var found = 0
        for _ in 0..<20_000 {
            let text = (0..<Int.random(in: 1...8, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            let expected = RoadReference.firstMatch(in: text)
            #expect(RoadReference.first(in: text) == expected, "\(text.debugDescription)")
            if expected != nil { found += 1 }
        }
        #expect(found > 1000)
        #expect(!RoadReference.mayContainReference("incident 123") && RoadReference.first(in: "incident 123") == nil)
    }
}
