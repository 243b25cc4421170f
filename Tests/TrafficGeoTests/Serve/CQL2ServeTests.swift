import Foundation
import Testing
@testable import TrafficGeoServe
@testable import TrafficGeoQuery
@testable import TrafficGeoStore
import TrafficGeoTestSupport

/// `serve`'s `filter` (CQL2 text) and `/collections/incidents/queryables`, asked as OGC clients
/// ask: the incidents a filter finds are the ones the command line finds for the same question,
/// whether the store answers the filter or it is checked incident by incident.
@Suite("serve: CQL2 filters ask what the command line asks", .serialized,
       .enabled(if: TestSupport.cliExecutable != nil, "the trafficgeo executable was not built beside the tests"))
struct CQL2ServeTests {
    /// Each of SameQuestionTests' questions: the parameters left beside the filter, and filters
    /// that ask the rest — one the store answers, others it cannot (OR across forms, NOT, a
    /// polygon), which are checked on each incident.
    static func filtered(now: Date) -> [(name: String, parameters: [String: String], filters: [String])] {
        let questions = Dictionary(uniqueKeysWithValues: SameQuestionTests.goodQuestions(now: now))
        let since = questions["circle with since and words"]!.first { $0.key == .since }!.value
        let circle = ["lat": "50.94", "lon": "6.96", "active-at": "now"]
        let square = "POLYGON((6.85 50.85, 7.0 50.85, 7.0 50.95, 6.85 50.95, 6.85 50.85))"
        return [
            ("circle with categories", circle.merging(["radius": "6km"]) { $1 },
             ["category IN ('accident','Baustelle')", "category = 'accident' OR category = 'Baustelle'",
              "NOT (category <> 'accident' AND category <> 'Baustelle')"]),
            ("box with a road", ["active-at": "now"],
             ["S_INTERSECTS(geometry, BBOX(6.85,50.85,7.0,50.95)) AND road = 'a 4'",
              "S_INTERSECTS(geometry, \(square)) AND (road = 'a 4' OR FALSE)"]),
            ("circle with since and words", circle.merging(["radius": "20km", "q": "koeln olpe"]) { $1 },
             ["updated >= TIMESTAMP('\(since)')", "NOT updated < TIMESTAMP('\(since)')"]),
            ("box across the antimeridian", ["active-at": "now"],
             ["S_INTERSECTS(geometry, BBOX(170,-20,-170,-10))", "S_INTERSECTS(geometry, BBOX(170,-20,-170,-10)) AND (id LIKE '%' OR road IS NULL)"]),
            ("miles", circle.merging(["radius": "3mi"]) { $1 },
             ["road IN ('A1','A3')", "road = 'A1' OR road = 'A3' OR (road = 'A1' AND title LIKE '%')"]),
        ]
    }

    @Test func aFilterFindsWhatTheCommandLineFinds() async throws {
        try await ServeFixture.serving { fixture in
            let questions = Dictionary(uniqueKeysWithValues: SameQuestionTests.goodQuestions(now: fixture.now))
            for (name, parameters, filters) in Self.filtered(now: fixture.now) {
                let expected = try await commandLineIDs(questions[name]!, fixture)
                #expect(!expected.isEmpty, "\(name): the question finds nothing, so it tests nothing")
                for filter in filters {
                    var query = parameters.map { QueryParameters.escape($0.key) + "=" + QueryParameters.escape($0.value) }
                    query += ["limit=10000", "filter=" + QueryParameters.escape(filter)]
                    let answer = try await fixture.get("/collections/incidents/items?" + query.joined(separator: "&"))
                    #expect(answer.status == 200, "\(name): \(filter): \(answer.body)")
                    #expect(SameQuestionTests.ids(serve: answer.body) == expected, "\(name): \(filter)")
                    #expect(answer.json["numberMatched"] as? Int == expected.count, "\(name): \(filter)")
                }
            }
        }
    }

    @Test func pagesAndCountsOfAFilterCheckedOnEachIncident() async throws {
        try await ServeFixture.serving { fixture in
            // Store order, walked a page at a time, and nearest first: the same incidents.
            let filter = QueryParameters.escape("road = 'A1' OR category = 'accident'")
            let all = try await fixture.get("/collections/incidents/items?limit=1000&filter=\(filter)")
            let total = all.json["numberMatched"] as? Int ?? 0
            #expect(total > 6 && total < 46, "\(total)")
            var walked: [String] = []
            for offset in stride(from: 0, to: total, by: 4) {
                let page = try await fixture.get("/collections/incidents/items?limit=4&offset=\(offset)&filter=\(filter)")
                #expect(page.json["numberMatched"] as? Int == total)
                walked += page.features.compactMap { ($0["properties"] as? [String: Any])?["id"] as? String }
            }
            #expect(walked == all.features.compactMap { ($0["properties"] as? [String: Any])?["id"] as? String })
            let nearest = try await fixture.get("/collections/incidents/items?lat=50.94&lon=6.96&nearest=5&filter=\(filter)")
            let distances = nearest.features.compactMap { ($0["properties"] as? [String: Any])?["distance_m"] as? Double }
            #expect(distances.count == 5 && distances == distances.sorted(), "\(nearest.body.prefix(300))")
            // The clusters count what the items count.
            let view = "bbox=6.5,50.5,7.5,51.5"
            let items = try await fixture.get("/collections/incidents/items?\(view)&limit=1&filter=\(filter)")
            let clusters = try await fixture.get("/collections/incidents/clusters?\(view)&filter=\(filter)")
            #expect(clusters.status == 200 && clusters.json["numberMatched"] as? Int == items.json["numberMatched"] as? Int, "\(clusters.body.prefix(300))")
            // A BBOX with the k nearest or along a route bounds them (it is not the question's box,
            // which neither takes): the nearest inside it, the route's incidents inside it.
            let box = "S_INTERSECTS(geometry, BBOX(6.9,50.9,7.0,51.0))"
            let inside = try await fixture.get("/collections/incidents/items?limit=1000&filter=" + QueryParameters.escape(box))
            let insideIDs = Set(inside.features.compactMap { ($0["properties"] as? [String: Any])?["id"] as? String })
            #expect(insideIDs.count >= 3, "\(insideIDs)")
            let nearestInside = try await fixture.get("/collections/incidents/items?lat=50.0&lon=6.0&nearest=3&filter=" + QueryParameters.escape(box))
            let nearestIDs = nearestInside.features.compactMap { ($0["properties"] as? [String: Any])?["id"] as? String }
            #expect(nearestInside.status == 200 && nearestIDs.count == 3 && Set(nearestIDs).isSubset(of: insideIDs), "\(nearestInside.body.prefix(300))")
            let route = QueryParameters.escape("LINESTRING(6.8 50.8, 7.2 51.1)")
            let along = try await fixture.get("/collections/incidents/items?limit=1000&route=\(route)&buffer=20km")
            let alongInside = try await fixture.get("/collections/incidents/items?limit=1000&route=\(route)&buffer=20km&filter=" + QueryParameters.escape(box))
            let alongIDs = Set(along.features.compactMap { ($0["properties"] as? [String: Any])?["id"] as? String })
            let alongInsideIDs = alongInside.features.compactMap { ($0["properties"] as? [String: Any])?["id"] as? String }
            #expect(alongInside.status == 200 && !alongInsideIDs.isEmpty && Set(alongInsideIDs) == alongIDs.intersection(insideIDs), "\(alongInside.body.prefix(300))")
            // Refusals: 400 with what to send instead.
            for (bad, words) in [("road ~ 'A1'", "filter is not CQL2 text: '~' has no meaning here"), ("colour = 'red'", "'colour' is not a queryable property"),
                                 ("road = 'Haupt;straße'", "road 'Haupt;straße' is not a road reference")] {
                let answer = try await fixture.get("/collections/incidents/items?filter=" + QueryParameters.escape(bad))
                #expect(answer.status == 400 && (answer.json["detail"] as? String ?? "").contains(words), "\(answer.body)")
            }
            let lang = try await fixture.get("/collections/incidents/items?filter-lang=cql2-json&filter=%7B%7D")
            #expect(lang.status == 400 && (lang.json["detail"] as? String ?? "").contains("filters are read as cql2-text"))
        }
    }

    @Test func queryablesAndConformanceAreAnnounced() async throws {
        try await ServeFixture.serving { fixture in
            let queryables = try await fixture.get("/collections/incidents/queryables")
            #expect(queryables.status == 200 && queryables.contentType == "application/schema+json")
            let properties = queryables.json["properties"] as? [String: [String: Any]] ?? [:]
            #expect(Set(properties.keys) == Set(Queryable.allCases.map(\.rawValue)))
            #expect((properties["category"]?["enum"] as? [String])?.contains("roadworks") == true)
            #expect(properties["updated"]?["format"] as? String == "date-time")
            let collection = try await fixture.get("/collections/incidents")
            #expect(collection.link("http://www.opengis.net/def/rel/ogc/1.0/queryables") == fixture.base + "/collections/incidents/queryables")
            let classes = try await fixture.get("/conformance").json["conformsTo"] as? [String] ?? []
            #expect(classes.contains("http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/filter"))
            #expect(classes.contains("http://www.opengis.net/spec/cql2/1.0/conf/cql2-text"))
        }
    }

    /// OWSLib, the OGC client library Python GIS tools use: it reads the queryables and asks a
    /// filter; the answer is the command line's.
    @Test(.enabled(if: Self.hasOWSLib, "OWSLib is not installed (scripts/setup: pip install OWSLib)"))
    func owslibReadsTheQueryablesAndItsFilterFindsWhatTheCommandLineFinds() async throws {
        try await ServeFixture.serving { fixture in
            let question = Dictionary(uniqueKeysWithValues: SameQuestionTests.goodQuestions(now: fixture.now))["box with a road"]!
            let expected = try await commandLineIDs(question, fixture)
            let script = """
            import json, sys
            from owslib.ogcapi.features import Features
            api = Features(sys.argv[1])
            queryables = api.collection_queryables('incidents')
            items = api.collection_items('incidents', filter=sys.argv[2], limit=10000, **{'active-at': 'now'})
            print(json.dumps({'queryables': sorted(queryables['properties']), 'ids': [f['properties']['id'] for f in items['features']]}))
            """
            let run = try await TestSupport.runOnThread(TestSupport.which("python3")!, ["-c", script, fixture.base,
                                                        "S_INTERSECTS(geometry, BBOX(6.85,50.85,7.0,50.95)) AND road = 'A4'"])
            #expect(run.status == 0, "\(run.stderr)")
            let answer = (try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8))) as? [String: Any] ?? [:]
            #expect(answer["queryables"] as? [String] == Queryable.allCases.map(\.rawValue).sorted())
            #expect(Set(answer["ids"] as? [String] ?? []) == expected && !expected.isEmpty)
        }
    }

    static var hasOWSLib: Bool {
        guard let python = TestSupport.which("python3") else { return false }
        return (try? TestSupport.run(python, ["-c", "import owslib.ogcapi.features"]).status) == 0
    }

    /// The question on the command line (`bbox` for a box, `within` for a circle).
    private func commandLineIDs(_ question: SameQuestionTests.Question, _ fixture: ServeFixture) async throws -> Set<String> {
        var arguments = [question.contains { $0.key == .bbox } ? "bbox" : "within", "--db", fixture.location, "-f", "json", "--quiet"]
        for (field, value) in question { arguments += [field.name(on: .commandLine), value] }
        let run = try await TestSupport.runCLI(arguments, folder: fixture.folder)
        #expect(run.status == 0, "\(run.stderr)")
        return SameQuestionTests.ids(commandLine: run.stdout)
    }
}
