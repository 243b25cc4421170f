import Testing
@testable import TrafficGeoRoadTitles
@testable import TrafficGeoFeeds
import Foundation
import TrafficGeoModel
import TrafficGeoSQLite
import TrafficGeoQuery
import TrafficGeoStore
import TrafficGeoSupport

/// One road grammar for the world (`RoadReference`, `WorldRoads`): each scheme in free text, in
/// a feed's road field and typed, with the misreadings each must not make.
@Suite("Road grammar: every scheme in free text and in road fields")
struct RoadGrammarTests {
    /// Free text (titles, descriptions): the road each scheme names, first by position.
    @Test(arguments: [
        // UK and Ireland: motorways, their (M) stretches, A and B roads.
        ("M11 southbound between J5 and J4", "M11"), ("The M25 clockwise between J9 and J10", "M25"),
        ("A1(M) northbound between J7 and J8", "A1(M)"), ("A404(M) westbound", "A404(M)"), ("A1 (M) J7", "A1(M)"),
        ("A12 southbound between A1117 and A1144", "A12"), ("Closure on the M50 at J7", "M50"),
        // US: Interstates, US and state routes, a state's code with its hyphen or road word.
        ("I-87 Northway between Exit 7 and Exit 8", "I-87"), ("I 5 south at Exit 210", "I-5"), ("Interstate 25 Denver", "I-25"),
        ("Lane closed on US-101 near Ukiah", "US-101"), ("U.S. 40 eastbound", "US-40"), ("SR 1 at Big Sur", "SR-1"),
        ("Work on NY-9A near the bridge", "NY-9a"), ("CT Route 15 closed", "CT-15"), ("CR 12 near the farm", "CR-12"),
        // New Zealand's state highways; Europe: E-roads, France, Spain, Germany.
        ("SH 16 Northwestern Motorway", "SH-16"), ("SH1 at Puhoi", "SH-1"), ("E40 Brussel richting Gent", "E40"),
        ("Bouchon sur la RN7 à Valence", "N7"), ("D906 fermée", "D906"), ("Retenciones en la A-7 en Málaga", "A7"),
        ("Obras en la N-340", "N340"), ("A4 : Koeln - Olpe", "A4"), ("Stau auf der A 3 bei Köln", "A3"), ("BAB 4 Köln", "A4"),
        // Finland's numbered roads, written with their road word.
        ("Tie 4, Lahti", "FI-4"), ("Valtatie 9 Tampere", "FI-9"),
        // The first road by position, whatever its scheme.
        ("M6 toll: A38 closed", "M6"), ("I-95 and A1 both", "I-95"),
    ])
    func freeTextNamesTheRoad(text: String, road: String) {
        #expect(RoadReference.first(in: text) == road, "\(text)")
    }

    /// What free text must not be read as a road (each a misparse a rule once made or would make).
    @Test(arguments: [
        "Closed for 3 hours OR 3 days", "IN 2 LANES", "Delays of CO 2 emissions", "M 5 bolts", "PM-10 levels high",
        "between J5 and J4", "Exit 12", "Lane 2 closed", "m25 lower case", "AT 5 PM", "In 3 km", "Ab 5 Uhr gesperrt",
        "Am 5. Mai", "COVID-19 testing site", "N 7 seven", "incident 123", "Phase 2", "",
    ])
    func freeTextIsNotARoad(text: String) {
        #expect(RoadReference.first(in: text) == nil, "\(text)")
    }

    /// A feed's road field: every road it names, references first; a part without one is the
    /// road's name.
    @Test(arguments: [
        ("I-87 Northway", ["I-87", "Northway"]), ("I-87 Major Deegan Expressway", ["I-87", "Major Deegan Expressway"]),
        ("Merritt Parkway/CT 15", ["CT-15", "Merritt Parkway"]), ("I-95 northbound", ["I-95"]), ("I-70 at Exit 5", ["I-70"]),
        ("US 6 near Golden", ["US-6"]), ("I-87 Northway/I-90", ["I-87", "I-90", "Northway"]), ("Highway 1 N", ["HWY-1"]),
        ("Sprain Brook State Pkwy", ["Sprain Brook State Pkwy"]), ("NY 3", ["NY-3"]), ("I-80; I-35", ["I-80", "I-35"]),
        ("US 6 & SH 9", ["US-6", "SH-9"]), ("A1(M)", ["A1(M)"]), ("A 4", ["A4"]), ("AP-7", ["AP-7"]), ("GIV-5232", ["GIV-5232"]),
        ("CV-500", ["CV-500"]), ("N-340", ["N340"]), ("SH 16", ["SH-16"]), ("valtatie 4", ["FI-4"]), ("Highway 401", ["HWY-401"]), ("Sprain Brook State Pkwy", ["Sprain Brook State Pkwy"]),
        ("  Main   Street ", ["Main Street"]), ("unknown", []), ("N/A", []), ("", []),
        // A bare number after a reference is that road's scheme (New Jersey's "US 1&9").
        ("US 1&9", ["US-1", "US-9"]), ("US 1 & 9", ["US-1", "US-9"]), ("I-35E/35W", [RoadReference.normalize("I-35E")!, RoadReference.normalize("I-35W")!]), ("NY 9A - Henry Hudson Parkway", ["NY-9a", "Henry Hudson Parkway"]),
        // A county in square brackets qualifies the road, and is no part of its name.
        ("NY 17 [Orange]", ["NY-17"]), ("Hutchinson River Parkway [Westchester]", ["Hutchinson River Parkway"]),
        // Beside others, a part is a road's name only when it names a street by its type: not a
        // direction, a region, a path.
        ("Highway 7 N/S Southbound", ["HWY-7"]), ("Kanton Zürich, Schweiz", []), ("highway/sh2", ["SH-2"]),
        ("Schillerstraße/B 54", ["B54", "Schillerstraße"]), ("XR17, 40", ["XR17"]),
    ])
    func roadFields(field: String, roads: [String]) {
        #expect(RoadReference.roads(inField: field) == roads, "\(field)")
    }

    /// Several fields: references before names, each once.
    @Test func severalFieldsPutReferencesFirst() {
        #expect(RoadReference.roads(inFields: ["Merritt Parkway", "CT 15", "ct-15"]) == ["CT-15", "Merritt Parkway"])
    }

    /// Typed by a person (the road filter): the same normal forms, any case.
    @Test(arguments: [("m25", "M25"), ("a1(m)", "A1(M)"), ("i 87", "I-87"), ("ap-7", "AP-7"), ("sh 16", "SH-16"), ("ny-9a", "NY-9a"), ("FI-11698", "FI-11698"),
                      ("Highway 14", "HWY-14"), ("hwy 1", "HWY-1"), ("Hwy. 97", "HWY-97"), ("Highway No. 5", "HWY-5"), ("bc-14", "BC-14"), ("ON 401", "ON-401")])
    func typedRoads(text: String, road: String) {
        #expect(RoadReference.normalize(text) == road, "\(text)")
    }

    /// A state's or province's road is its unqualified State Route or Highway of the number, and
    /// those are any state's or province's: `--road "Highway 14"` finds a BC feed's BC-14,
    /// `--road CA-1` an SR-1, `--road SR-1` a CA-1; a road of another number or scheme is not.
    @Test func unqualifiedStateRoadsAreAnyStatesRoad() throws {
        func found(_ typed: String, on road: String) throws -> Bool {
            let stored = StoredIncident(storeID: 1, incident: Incident(source: "s", id: "1", title: "Closure", road: road), firstSeen: Date(), lastChanged: Date())
            var text = QueryText()
            text.add(.road, typed)
            return try text.filter().matches(stored)
        }
        for (typed, road) in [("Highway 14", "BC-14"), ("Hwy 14", "HWY-14"), ("BC-14", "HWY-14"), ("SR-1", "CA-1"), ("CA-1", "SR-1"),
                              ("ca 1", "HWY-1"), ("Highway 101", "US-101"), ("NY-9A", "SR-9a")] {
            #expect(try found(typed, on: road), "\(typed) finds \(road)")
        }
        for (typed, road) in [("Highway 14", "BC-15"), ("SR-1", "US-1"), ("CA-1", "I-1"), ("Highway 1", "A1"), ("M1", "HWY-1"), ("I-5", "SR-5")] {
            #expect(try !found(typed, on: road), "\(typed) does not find \(road)")
        }
        #expect(RoadReference.first(in: "Highway 14 closed at Sooke") == "HWY-14")
        #expect(RoadReference.first(in: "BC-14 closed at Sooke") == "BC-14")
    }

    /// Names as road filters: any case, spaces collapsed; what no name holds is refused.
    @Test func namesAreRoadFilters() throws {
        let incident = Incident(source: "ny", id: "1", title: "Work zone", road: "Sprain Brook State Pkwy")
        let stored = StoredIncident(storeID: 1, incident: incident, firstSeen: Date(), lastChanged: Date())
        for typed in ["Sprain Brook State Pkwy", "sprain brook  state pkwy", "SPRAIN BROOK STATE PKWY"] {
            var text = QueryText()
            text.add(.road, typed)
            #expect(try text.filter().matches(stored), "\(typed)")
        }
        // A street type written out or abbreviated is the same name, whichever the feed wrote.
        let spelled: [(stored: String, typed: [String])] = [
            ("Sprain Brook State Pkwy", ["Sprain Brook State Parkway", "sprain brook state pkwy."]),
            ("PARK AVE", ["Park Avenue", "park ave."]), ("Park Avenue", ["PARK AVE", "Park Av"]),
            ("Hauptstr.", ["Hauptstraße", "Hauptstrasse"]), ("Hauptstraße", ["Hauptstr."]),
            ("E 42nd St", ["East 42nd Street"]), ("Bd Haussmann", ["Boulevard Haussmann"]), ("Hauptstr.", ["hauptstr"]),
            // A feed's own road text as typed: the roads it names.
            ("I-87", ["I-87 Northway", "I-87 Major Deegan Expressway"]), ("CT-15", ["Merritt Parkway/CT 15"]), ("NY-17", ["NY 17 [Orange]"]),
            ("Hutchinson River Parkway", ["Hutchinson River Parkway [Westchester]"]),
        ]
        for (road, typings) in spelled {
            let on = StoredIncident(storeID: 1, incident: Incident(source: "x", id: "1", title: "Works", road: road), firstSeen: Date(), lastChanged: Date())
            for typed in typings {
                var text = QueryText()
                text.add(.road, typed)
                #expect(try text.filter().matches(on), "\(typed) → \(road)")
            }
        }
        var other = QueryText()
        other.add(.road, "Park Road")
        #expect(try !other.filter().matches(StoredIncident(storeID: 1, incident: Incident(source: "x", id: "1", title: "Works", road: "PARK AVE"),
                                                           firstSeen: Date(), lastChanged: Date())), "another street type is another road")
        #expect(RoadNameSpellings.of("Merritt Parkway").count <= RoadNameSpellings.limit && RoadNameSpellings.of("Northway") == ["Northway"])
        var oneWord = QueryText()
        oneWord.add(.road, "F22")
        #expect(try oneWord.filter().roads == ["F22"], "a one-word name a feed gives is a road too")
        for refused in ["401;DROP", "Main \"Street\"", String(repeating: "a1 ", count: 30)] {
            var bad = QueryText()
            bad.add(.road, refused)
            #expect(throws: QueryTextError.self, "\(refused)") { try bad.filter() }
        }
    }

    /// Placeholders a feed writes for "no value" reach no title.
    @Test func placeholdersReachNoTitle() throws {
        let feed = """
        {"type": "FeatureCollection", "features": [
          {"type": "Feature", "id": "a", "geometry": {"type": "Point", "coordinates": [7, 50]}, "properties": {"title": "undefined", "description": "N/A"}},
          {"type": "Feature", "id": "b", "geometry": {"type": "Point", "coordinates": [7, 50]}, "properties": {"title": "Crash on I-95"}}
        ]}
        """
        let incidents = try TestSupport.read(feed, name: "p.geojson").incidents
        #expect(incidents.map(\.title) == [Incident.unknownTitle, "Crash on I-95"])
        #expect(incidents[0].summary == nil)
        #expect(incidents[1].road == "I-95")
    }
}

/// Every road the tool shows for an incident (its road and other roads) is one the road filter
/// accepts, and that filter finds the incident, in memory and in an SQLite store: over every
/// document of `../shared/data/standards`, the project's sample feeds, and any folder named in
/// `TRAFFICGEO_ROUNDTRIP_DIRS` (colon-separated: run by hand on documents no test is built on).
@Suite("Road grammar round trip")
struct RoadRoundTripTests {
    static var documents: [URL] {
        var folders = [TestSupport.repositoryRoot.appendingPathComponent("data/sample")]
        if let shared = TestSupport.sharedFolder { folders.append(shared.appendingPathComponent("data/standards")) }
        for extra in (ProcessInfo.processInfo.environment["TRAFFICGEO_ROUNDTRIP_DIRS"] ?? "").split(separator: ":") {
            folders.append(URL(fileURLWithPath: String(extra)))
        }
        var out: [URL] = []
        for folder in folders {
            guard let walk = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil) else { continue }
            for case let url as URL in walk where !url.path.contains("/schema") && !url.hasDirectoryPath
                && ["xml", "json", "geojson", "rss", "gz", "csv"].contains(url.pathExtension.lowercased()) {
                out.append(url)
            }
        }
        return out.sorted { $0.path < $1.path }
    }

    @Test(.enabled(if: TestSupport.sharedFolder != nil, "needs ../shared/data/standards"))
    func everyRoadShownFindsItsIncident() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        var roadsChecked = 0
        for (k, url) in Self.documents.enumerated() {
            let read: [Incident]
            do { read = try FeedReading.readAll(FeedInput(localFile: url.path), source: "doc\(k)").incidents } catch { continue }
            // One report per id, as a store keeps it.
            var byID: [String: Incident] = [:]
            for incident in read { byID[incident.id] = incident }
            let incidents = Array(byID.values)
            let store = try SQLiteIncidentStore(path: folder.appendingPathComponent("rt\(k).sqlite").path)
            _ = try store.ingest(source: "doc\(k)") { handle in for i in incidents { try handle(.incident(i)) } }
            var onRoad: [String: Set<String>] = [:]
            for incident in incidents {
                for road in [incident.road].compactMap({ $0 }) + incident.otherRoads { onRoad[road, default: []].insert(incident.id) }
            }
            for (road, ids) in onRoad {
                var text = QueryText()
                text.add(.road, road)
                var filter: IncidentFilter
                do { filter = try text.filter() } catch {
                    Issue.record("\(url.lastPathComponent): the road '\(road)' it shows is refused: \(error)")
                    continue
                }
                filter.reports = true
                for id in ids {
                    let stored = StoredIncident(storeID: 1, incident: byID[id]!, firstSeen: Date(), lastChanged: Date())
                    #expect(filter.matches(stored), "\(url.lastPathComponent): '\(road)' does not match \(id) in memory")
                }
                let found = Set(try store.all(filter: filter, locatedOnly: false, offset: 0, limit: 1_000_000).map(\.stored.incident.id))
                #expect(ids.isSubset(of: found), "\(url.lastPathComponent): '\(road)' finds \(ids.subtracting(found).count) of its \(ids.count) incidents not in the store")
                roadsChecked += 1
            }
        }
        #expect(roadsChecked > 20)
    }
}
