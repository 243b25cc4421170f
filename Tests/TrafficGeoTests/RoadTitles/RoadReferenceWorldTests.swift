import Testing
@testable import TrafficGeoRoadTitles
import Foundation
import TrafficGeoModel
import TrafficGeoQuery
import TrafficGeoStore

/// The road references of other schemes, as a person types them and feeds' road fields give
/// them, each in its normal form (`RoadReference.normalize`, `WorldRoads`).
@Suite("Road references of the world")
struct RoadReferenceWorldTests {
    @Test(arguments: [
        // US: Interstates, US routes, state routes, a state's own code, county roads.
        ("I-25", "I-25"), ("I 25", "I-25"), ("I25", "I-25"), ("Interstate 25", "I-25"), ("IH 35", "I-35"), ("i-70", "I-70"),
        ("I-70 WB", "I-70"), ("US-40", "US-40"), ("US 40", "US-40"), ("US Highway 40", "US-40"), ("U.S. 40", "US-40"),
        ("SR 7", "SR-7"), ("State Route 99", "SR-99"), ("SH 7", "SH-7"), ("State Highway 7", "SH-7"),
        ("CO-7", "CO-7"), ("CO 67", "CO-67"), ("CA Highway 1", "CA-1"), ("County Road 12", "CR-12"), ("CR 12", "CR-12"),
        // UK and Ireland.
        ("M1", "M1"), ("M25", "M25"), ("A1(M)", "A1(M)"), ("A1 (M)", "A1(M)"), ("A404", "A404"), ("B1234", "B1234"), ("M1 northbound", "M1"),
        ("M50", "M50"), ("N7", "N7"), ("R132", "R132"),
        // France.
        ("A7", "A7"), ("RN7", "N7"), ("RN 7", "N7"), ("N 7", "N7"), ("D906", "D906"), ("RD906", "D906"),
        // Netherlands and Belgium; Italy; Europe.
        ("A2", "A2"), ("N201", "N201"), ("R0", "R0"), ("SS1", "SS1"), ("E40", "E40"), ("E 40", "E40"),
        // Germany as before, Austria, Switzerland.
        ("A 4", "A4"), ("BAB 4", "A4"), ("a4", "A4"), ("B54", "B54"), ("L 123", "L123"), ("K12", "K12"), ("S 1", "S1"),
    ])
    func normalForm(text: String, normal: String) {
        #expect(RoadReference.normalize(text) == normal, "\(text)")
    }

    @Test(arguments: ["J29A", "Köln", "A4 paper", "Interstate", "route", "M", "12", "I-0", "US", "Kreuz Köln-Ost", "between J29 and J30", ""])
    func notARoad(text: String) {
        #expect(RoadReference.normalize(text) == nil, "\(text)")
    }

    /// A road filter may name the country the feed publishes for: "fr:A7" is A7 in France.
    @Test(arguments: [
        ("fr:A7", "fr:A7"), ("FR:a 7", "fr:A7"), ("gb:A1(M)", "gb:A1(M)"), ("us:Interstate 25", "us:I-25"), ("de:BAB 4", "de:A4"),
        ("A7", "A7"), (" nl:A2 ", "nl:A2"),
    ])
    func roadConditionsWithACountry(text: String, condition: String) {
        #expect(RoadCondition(text)?.text == condition, "\(text)")
    }

    @Test(arguments: ["fra:A7", "f:A7", "fr:", "fr:Köln", "12:A7", "A7:fr", "fr:A4 paper", "xx:A4", "qq:M1"])
    func notARoadCondition(text: String) {
        #expect(RoadCondition(text) == nil, "\(text)")
    }

    /// A search's road references are one word in their normal form, folded (so "I-25" does not
    /// become "i" and "25", and "i" is in every text); plain words stay words.
    @Test(arguments: [
        ("I-25", ["i 25"]), ("i25", ["i 25"]), ("Interstate 25 Denver", ["i 25", "denver"]), ("US 6 westbound", ["us 6", "westbound"]),
        ("A1(M) J7", ["a1 m", "j7"]), ("A 4 Köln", ["a4", "koeln"]), ("J29A", ["j29a"]), ("falschfahrer koeln", ["falschfahrer", "koeln"]),
        ("Exit 210", ["exit", "210"]), ("M1 southbound", ["m1", "southbound"]),
    ])
    func searchWordsKeepRoadsWhole(search: String, words: [String]) {
        #expect(IncidentFilter.searchWords(search) == words)
    }

    /// Ontario's "Highway 401" (an Open511 feed's road field) is the highway 401, whatever its
    /// spelling; a road the grammar does not know is found by its name, as the feed writes it
    /// (a street); what no name holds is refused.
    @Test func aRoadsNameWithItsNumberIsARoadFilter() throws {
        var text = QueryText()
        text.add(.road, "Highway  401")
        let filter = try text.filter()
        #expect(filter.roads == ["HWY-401"])
        let incident = Incident(source: "on", id: "1", title: "Works", road: RoadReference.field("Highway 401"))
        #expect(filter.matches(StoredIncident(storeID: 1, incident: incident, firstSeen: Date(), lastChanged: Date())))
        var province = QueryText()
        province.add(.road, "ON-401")
        #expect(try province.filter().matches(StoredIncident(storeID: 1, incident: incident, firstSeen: Date(), lastChanged: Date())))
        var street = QueryText()
        street.add(.road, "Hauptstraße")
        #expect(try street.filter().roads == ["Hauptstraße"])
        for refused in ["401;DROP", "Highway 401;", String(repeating: "a1 ", count: 30)] {
            var bad = QueryText()
            bad.add(.road, refused)
            #expect(throws: QueryTextError.self, "\(refused)") { try bad.filter() }
        }
    }

    @Test func feedFieldsKeepTheirForm() {
        #expect(RoadReference.field("A4") == "A4")
        #expect(RoadReference.field("I 70") == "I-70")
        #expect(RoadReference.field("A1(M)") == "A1(M)")
        // A field that is a sentence: its first German reference, as before.
        #expect(RoadReference.field("A4 Köln Richtung Olpe") == "A4")
    }
}
