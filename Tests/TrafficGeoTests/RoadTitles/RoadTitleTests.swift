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
}
