import AsyncHTTPClient
import Foundation
import Testing
@testable import TrafficGeoModel
@testable import TrafficGeoProjection
@testable import TrafficGeoQuery
@testable import TrafficGeoSQLite
@testable import TrafficGeoServe
@testable import TrafficGeoStore
@testable import TrafficGeoSupport
import TrafficGeoTestSupport

/// `trafficgeo serve` asked over loopback HTTP: every endpoint, every parameter, every 400.
@Suite("serve: OGC API – Features and trafficgeo's parameters")
struct ServeAPITests {
    @Test func theStandardResourcesAnswerWithTheirLinks() async throws {
        try await ServeFixture.serving { f in
            let landing = try await f.get("/")
            #expect(landing.status == 200 && landing.contentType == "application/json")
            let rels = Set((landing.json["links"] as? [[String: Any]] ?? []).compactMap { $0["rel"] as? String })
            #expect(rels.isSuperset(of: ["self", "service-desc", "conformance", "data"]))
            #expect(landing.link("data") == f.base + "/collections", "links are built from the Host the client used")

            let conformance = try await f.get("/conformance")
            let classes = conformance.json["conformsTo"] as? [String] ?? []
            #expect(classes.contains("http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core"))
            #expect(classes.contains("http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/geojson"))

            let api = try await f.get("/api")
            #expect(api.status == 200 && api.contentType.hasPrefix("application/vnd.oai.openapi+json"))
            let paths = api.json["paths"] as? [String: Any] ?? [:]
            #expect(Set(paths.keys) == ["/", "/conformance", "/api", "/collections", "/collections/incidents", "/collections/incidents/items",
                                        "/collections/incidents/items/{featureId}", "/collections/incidents/events", "/collections/incidents/clusters",
                                        "/collections/incidents/queryables"])
            // Every path the document describes is a route the server declares (ServeRoute), the
            // operators' routes and Leaflet's files aside.
            func template(_ path: String) -> String { path.replacingOccurrences(of: #"\{[^}]*\}"#, with: "{}", options: .regularExpression) }
            let routes = Set(ServeRoute.allCases.filter { ![.health, .ready, .metrics, .leafletFile].contains($0) }.map { template($0.rawValue) })
            #expect(Set(paths.keys.map(template)) == routes)
            // The clusters' parameters are what ViewClusters reads.
            let clusters = ((paths["/collections/incidents/clusters"] as? [String: Any])?["get"] as? [String: Any])?["parameters"] as? [[String: Any]] ?? []
            #expect(Set(clusters.compactMap { $0["name"] as? String }) == ViewClusters.parameters)
            let servers = api.json["servers"] as? [[String: Any]]
            #expect(servers?.first?["url"] as? String == f.base)
            // Every parameter the items endpoint reads is declared, and nothing else.
            let items = (paths["/collections/incidents/items"] as? [String: Any])?["get"] as? [String: Any]
            let declared = Set((items?["parameters"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String })
            #expect(declared == ItemsQuery.standardParameters.union(ItemsQuery.ownParameters))

            let collections = try await f.get("/collections")
            let list = collections.json["collections"] as? [[String: Any]] ?? []
            #expect(list.count == 1 && list.first?["id"] as? String == "incidents")
            let collection = try await f.get("/collections/incidents")
            #expect(collection.json["id"] as? String == "incidents")
            #expect(collection.link("items") == f.base + "/collections/incidents/items")
            #expect((collection.json["crs"] as? [String])?.first == "http://www.opengis.net/def/crs/OGC/1.3/CRS84")
            // The extent is the data's: the box of every located incident, not the whole world.
            let all = try await f.get("/collections/incidents/items?limit=1000")
            let points = all.features.compactMap { (($0["geometry"] as? [String: Any])?["coordinates"] as? [Double]) }
            let expected = [points.map { $0[0] }.min()!, points.map { $0[1] }.min()!, points.map { $0[0] }.max()!, points.map { $0[1] }.max()!]
            let extent = ((collection.json["extent"] as? [String: Any])?["spatial"] as? [String: Any])?["bbox"] as? [[Double]]
            #expect(extent?.count == 1 && zip(extent?.first ?? [], expected).allSatisfy { abs($0 - $1) < 1e-6 }, "\(extent ?? []) vs \(expected)")
            #expect(expected != [-180, -90, 180, 90])

            // HTML for every resource (the HTML conformance class); the map for / and items.
            for path in ["/?f=html", "/conformance?f=html", "/api?f=html", "/collections?f=html", "/collections/incidents?f=html"] {
                let page = try await f.get(path)
                #expect(page.status == 200 && page.contentType.hasPrefix("text/html") && page.body.contains("<html"), "\(path)")
            }
            let browser = try await f.get("/", headers: [("Accept", "text/html,application/xhtml+xml,*/*;q=0.8")])
            #expect(browser.body.contains("/map/leaflet/leaflet.js"), "a browser gets the map")
            let head = try await f.get("/collections", method: .HEAD)
            #expect(head.status == 200 && head.body.isEmpty)
        }
    }

    @Test func itemsPageAndTheirLinksWalkTheWholeCollectionExactlyOnce() async throws {
        try await ServeFixture.serving { f in
            let first = try await f.get("/collections/incidents/items")
            #expect(first.status == 200 && first.contentType == "application/geo+json")
            #expect(first.json["numberReturned"] as? Int == 10, "limit defaults to 10")
            let total = first.json["numberMatched"] as? Int
            #expect(total == 46)
            #expect(first.json["timeStamp"] is String)
            #expect(first.link("prev") == nil)

            for query in ["limit=7", "limit=7&bbox=6.8,50.8,7.2,51.1", "limit=6&lat=50.94&lon=6.96", "limit=9&sortby=title&road=A4"] {
                var next: String? = "/collections/incidents/items?" + query
                var seen: [Int] = [], matched = -1, pages = 0
                while let url = next {
                    let page = try await f.get(url)
                    #expect(page.status == 200, "\(url): \(page.body)")
                    seen += page.ids
                    matched = page.json["numberMatched"] as? Int ?? -1
                    #expect(page.json["numberReturned"] as? Int == page.ids.count)
                    next = page.link("next")
                    pages += 1
                    if pages > 20 { break }
                }
                #expect(seen.count == matched && Set(seen).count == seen.count, "\(query): every incident once (\(seen.count) of \(matched))")
                // And back: prev from the second page is the first.
                let second = try await f.get("/collections/incidents/items?\(query)&offset=\(query.hasPrefix("limit=7") ? 7 : query.hasPrefix("limit=6") ? 6 : 9)")
                if let prev = second.link("prev") {
                    let back = try await f.get(prev)
                    #expect(back.ids == Array(seen.prefix(back.ids.count)), "\(query): prev leads back")
                }
            }
            let all = try await f.get("/collections/incidents/items?limit=10000")
            #expect(all.ids.count == 46)
            let ids = Set(all.ids)
            // One incident by its id, as GeoJSON with links; unknown ids are 404 problems.
            let one = try await f.get("/collections/incidents/items/\(all.ids[0])")
            #expect(one.status == 200 && one.json["id"] as? Int == all.ids[0] && one.contentType == "application/geo+json")
            #expect(one.link("collection") == f.base + "/collections/incidents")
            let missing = try await f.get("/collections/incidents/items/\((ids.max() ?? 0) + 1000)")
            #expect(missing.status == 404 && missing.contentType == "application/problem+json")
            let word = try await f.get("/collections/incidents/items/abc")
            #expect(word.status == 404)
        }
    }

    @Test func aBoxAcrossTheAntimeridianHoldsBothSides() async throws {
        try await ServeFixture.serving { f in
            let across = try await f.get("/collections/incidents/items?bbox=179,-20,-179,-10")
            let titles = Set(across.features.compactMap { ($0["properties"] as? [String: Any])?["title"] as? String })
            #expect(titles == ["Pacific east", "Pacific west"])
            let wide = try await f.get("/collections/incidents/items?bbox=178,-20,-179,-10")
            #expect(wide.ids.count == 3)
            let sixNumbers = try await f.get("/collections/incidents/items?bbox=179,-20,0,-179,-10,100")
            #expect(sixNumbers.ids.count == 2)
            // Every position in CRS84: longitude first.
            let coordinates = across.features.compactMap { (($0["geometry"] as? [String: Any])?["coordinates"] as? [Double]) }
            #expect(coordinates.allSatisfy { abs($0[0]) > 179 && $0[1] == -17 })
        }
    }

    /// `route=` (a saved route's name, WKT or GeoJSON) with `buffer=`: the incidents along it in
    /// the order a driver meets them, across the antimeridian, as `along` answers; mistakes are 400s.
    @Test func aRouteAnswersInTheOrderADriverMeetsTheIncidents() async throws {
        var configuration = ServeConfiguration()
        let fiji = [Coordinate(latitude: -17, longitude: 178.0), Coordinate(latitude: -17, longitude: 179.6),
                    Coordinate(latitude: -17, longitude: -179.6), Coordinate(latitude: -17, longitude: -178.0)]
        configuration.routes = ["fiji": fiji]
        try await ServeFixture.serving(configuration: configuration) { f in
            let saved = try await f.get("/collections/incidents/items?route=fiji&buffer=5km")
            #expect(saved.status == 200, Comment(rawValue: saved.body))
            #expect(saved.features.map { ($0["properties"] as? [String: Any])?["id"] as? String } == ["fiji", "east", "west"])
            let along = saved.features.compactMap { ($0["properties"] as? [String: Any])?["along_m"] as? Double }
            #expect(along.count == 3 && along == along.sorted())
            let wkt = "LINESTRING(178 -17,179.6 -17,-179.6 -17,-178 -17)".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            #expect(try await f.get("/collections/incidents/items?route=\(wkt)&buffer=5km").ids == saved.ids)
            let geojson = #"{"type":"LineString","coordinates":[[178,-17],[179.6,-17],[-179.6,-17],[-178,-17]]}"#.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            #expect(try await f.get("/collections/incidents/items?route=\(geojson)&buffer=5km").ids == saved.ids)
            // The same order as the query engine's (what `along` prints).
            let engine = QueryEngine(store: f.writer)
            let expected = try await StoreThreads.run { try engine.along(RouteCourse(fiji), buffer: 5_000) }
            #expect(saved.ids.map(Int64.init) == expected.map(\.stored.storeID))
            // Paging walks the same order.
            let first = try await f.get("/collections/incidents/items?route=fiji&buffer=5km&limit=2")
            let second = try await f.get("/collections/incidents/items?route=fiji&buffer=5km&limit=2&offset=2")
            #expect(first.ids + second.ids == saved.ids && first.json["numberMatched"] as? Int == 3)

            for bad in ["route=nowhere", "route=fiji&lat=50&lon=7", "buffer=2km", "route=fiji&buffer=wide", "route=LINESTRING(1%202)",
                        "geometry=segment", "geometry=lines"] {
                let answer = try await f.get("/collections/incidents/items?" + bad)
                #expect(answer.status == 400, "\(bad): \(answer.body)")
            }
            #expect(try await f.get("/collections/incidents/items?route=nowhere").body.contains("fiji"), "the saved routes are named")
            #expect(try await f.get("/collections/incidents/events?route=fiji").status == 400, "the event stream takes no route")
            #expect(try await f.get("/collections/incidents/items?geometry=mixed&bbox=6,50,8,52").status == 200)
        }
    }

    /// `/collections/incidents/clusters`: a view's incidents counted cell by cell — as many as
    /// items count for the same box and filters, across the antimeridian too; mistakes are 400s.
    @Test func clustersCountWhatItemsCount() async throws {
        try await ServeFixture.serving { f in
            for question in ["bbox=6.8,50.8,7.2,51.1", "bbox=6.8,50.8,7.2,51.1&road=A3", "bbox=6.8,50.8,7.2,51.1&active-at=now",
                             "bbox=178,-20,-179,-10", "bbox=-180,-90,180,90&category=accident"] {
                let items = try await f.get("/collections/incidents/items?" + question + "&limit=1")
                let clusters = try await f.get("/collections/incidents/clusters?" + question + "&cells=3x2")
                #expect(clusters.status == 200, Comment(rawValue: clusters.body))
                let counts = clusters.features.compactMap { ($0["properties"] as? [String: Any])?["count"] as? Int }
                #expect(counts.reduce(0, +) == items.json["numberMatched"] as? Int && clusters.json["numberMatched"] as? Int == counts.reduce(0, +), "\(question)")
                #expect(counts.count <= 6 && counts.allSatisfy { $0 > 0 })
            }
            // Each cell's point is where its incidents are: inside the box.
            let across = try await f.get("/collections/incidents/clusters?bbox=178,-20,-179,-10&cells=1x1")
            let point = try #require((across.features.first?["geometry"] as? [String: Any])?["coordinates"] as? [Double])
            #expect(abs(point[0]) > 178 && point[1] == -17, "the mean of 178.4, 179.8 and -179.7 is east of 179, not at 59: \(point)")
            for bad in ["", "bbox=1,2,3,4&cells=100x2", "bbox=1,2,3,4&cells=abc", "bbox=1,2,3,4&f=html", "bbox=1,2,3,4&limit=5", "bbox=1,2,3,4&lat=1&lon=2"] {
                #expect(try await f.get("/collections/incidents/clusters?" + bad).status == 400, "\(bad)")
            }
        }
    }

    /// The ranking a map's view uses (chord first, exact distance where it can still matter) is
    /// the full sort by geodesic distance.
    @Test func aViewsNearestFirstIsTheFullSort() {
        var g = SplitMix64(seed: 7)
        let points = (0..<5_000).map { i in
            Neighbour(storeID: Int64(i), id: "", distance: 0,
                      position: Coordinate(latitude: Double.random(in: 45...55, using: &g), longitude: Double.random(in: 5...15, using: &g)))
        }
        // Ties: the same place twice, ranked by store id.
        let all = points + points.prefix(50).map { Neighbour(storeID: $0.storeID + 10_000, id: "", distance: 0, position: $0.position) }
        let reference = Coordinate(latitude: 50, longitude: 10)
        let sorted = all.map { n -> Neighbour in
            var n = n
            n.distance = Geodesic.distance(from: reference, to: n.position)
            return n
        }.sorted { QueryResult.precedes(($0.distance, $0.storeID), ($1.distance, $1.storeID)) }
        for keep in [1, 10, 500, 6_000] {
            #expect(ItemsSearch.nearestFirst(all, from: reference, keep: keep).map(\.storeID) == sorted.prefix(keep).map(\.storeID))
        }
    }

    @Test func nearestAndWithinAnswerAsTheQueryEngineDoes() async throws {
        try await ServeFixture.serving { f in
            let engine = QueryEngine(store: f.writer)
            let centre = Coordinate(latitude: 50.94, longitude: 6.96)
            let expected = try await StoreThreads.run { try engine.nearest(to: centre, limit: 5) }
            let nearest = try await f.get("/collections/incidents/items?lat=50.94&lon=6.96&nearest=5&limit=100")
            #expect(nearest.ids == expected.map { Int($0.stored.storeID) })
            let distances = nearest.features.compactMap { ($0["properties"] as? [String: Any])?["distance_m"] as? Double }
            #expect(zip(distances, expected.compactMap(\.distance)).allSatisfy { abs($0 - $1) < 0.1 })
            #expect(nearest.features.allSatisfy { ($0["properties"] as? [String: Any])?["bearing_deg"] is Double })

            let within = try await StoreThreads.run { try engine.within(radius: 5000, of: centre) }
            let answer = try await f.get("/collections/incidents/items?lat=50.94&lon=6.96&radius=5km&limit=1000")
            #expect(answer.ids == within.map { Int($0.stored.storeID) }, "within, nearest first")
            #expect(answer.json["numberMatched"] as? Int == within.count)
            let metres = try await f.get("/collections/incidents/items?lat=50.94&lon=6.96&radius=5km&limit=1000")
            #expect(metres.ids == answer.ids)
            // nearest within a radius; lat/lon alone sorts the whole collection by distance.
            let capped = try await f.get("/collections/incidents/items?lat=50.94&lon=6.96&nearest=1000&radius=5km&limit=1000")
            #expect(capped.ids == answer.ids)
            let sorted = try await f.get("/collections/incidents/items?lat=50.94&lon=6.96&limit=5")
            #expect(sorted.ids == expected.map { Int($0.stored.storeID) })
            #expect(sorted.json["numberMatched"] as? Int == 45, "every positioned incident")
            // A box with a point: the box's incidents, nearest first.
            let boxed = try await f.get("/collections/incidents/items?bbox=6.8,50.8,7.2,51.1&lat=50.94&lon=6.96&limit=3")
            #expect(boxed.ids == Array(expected.prefix(3).map { Int($0.stored.storeID) }))
        }
    }

    @Test func filtersMeanWhatTheCommandLineOptionsMean() async throws {
        try await ServeFixture.serving { f in
            func titles(_ query: String) async throws -> [String] {
                let a = try await f.get("/collections/incidents/items?limit=1000&" + query)
                #expect(a.status == 200, "\(query): \(a.body)")
                return a.features.compactMap { ($0["properties"] as? [String: Any])?["title"] as? String }
            }
            func properties(_ query: String, _ key: String) async throws -> [String] {
                let a = try await f.get("/collections/incidents/items?limit=1000&" + query)
                return a.features.compactMap { ($0["properties"] as? [String: Any])?[key] as? String }
            }
            #expect(try await properties("road=a 4", "road").allSatisfy { $0 == "A4" })
            #expect(try await properties("road=A1,A3", "road").count == 27)
            #expect(try await properties("road=A1&road=A3", "road").count == 27)
            #expect(try await properties("category=Unfall", "category").allSatisfy { $0 == "accident" })
            #expect(try await properties("category=accident", "category").count == 11)
            #expect(try await titles("q=koeln olpe 12") == ["A1 : Köln - Olpe 12"], "Koeln finds Köln")
            #expect(try await titles("q=Koeln+olpe+12") == ["A1 : Köln - Olpe 12"], "+ is a space")
            // active-at now: not the ended one (and not those expired); datetime instant is the same.
            let active = try await titles("active-at=now")
            #expect(!active.contains("A4 : Köln - Aachen, ended") && active.count == 45)
            let instant = try await titles("datetime=" + TimestampParser.format(Date()))
            #expect(instant.count == 45)
            #expect(try await titles("active-at=%2B2h").count == 5, "in two hours only those without expiry remain")
            // datetime interval: updated within it.
            let recent = try await titles("datetime=" + TimestampParser.format(f.now.addingTimeInterval(-630)) + "/..")
            #expect(recent.count == 17, "k0…k10 and the six updated now (the ended one too: it was updated)")
            #expect(try await titles("datetime=../2000-01-01T00:00:00Z").isEmpty)
            #expect(try await titles("min-confidence=0.9").count == 45, "positions a feed gave always pass; the one without a position has no confidence")
            let byTitle = try await titles("sortby=title&road=A9")
            #expect(byTitle == byTitle.sorted())
            let newest = try await properties("sortby=updated&road=A1&bbox=6,50,8,52", "updated")
            #expect(newest == newest.sorted(by: >))
            let byDistance = try await f.get("/collections/incidents/items?sortby=distance&lat=50.9&lon=6.9&limit=1000")
            let d = byDistance.features.compactMap { ($0["properties"] as? [String: Any])?["distance_m"] as? Double }
            #expect(d == d.sorted() && d.count == 45)
        }
    }

    @Test(arguments: [
        ("limit=0", "limit"), ("limit=10001", "limit"), ("limit=unlimited", "limit"), ("limit=-1", "limit"), ("offset=-3", "offset"),
        ("offset=x", "offset"), ("bbox=1,2,3", "bbox"), ("bbox=a,b,c,d", "bbox"), ("bbox=0,10,1,5", "bbox"), ("bbox=0,0,200,1", "bbox"),
        ("bbox=0,-91,1,1", "bbox"), ("lat=50", "lon"), ("lon=7", "lat"), ("lat=91&lon=7", "lat"), ("lat=50&lon=181", "lon"),
        ("lat=x&lon=7", "lat"), ("radius=5km", "radius"), ("lat=50&lon=7&radius=25", "radius"), ("lat=50&lon=7&radius=-5", "radius"), ("lat=50&lon=7&radius=far", "radius"),
        ("nearest=5", "nearest"), ("lat=50&lon=7&nearest=0", "nearest"), ("lat=50&lon=7&nearest=5&bbox=0,0,1,1", "nearest"),
        ("road=Haupt;strasse", "road"), ("category=unicorns", "category"), ("min-confidence=2", "min-confidence"),
        ("precision=perfect", "precision"), ("sortby=colour", "sortby"), ("sortby=distance", "sortby"), ("active-at=soonish", "active-at"),
        ("datetime=yesterday", "datetime"), ("datetime=2025-01-02T00:00:00Z/2025-01-01T00:00:00Z", "datetime"), ("datetime=a/b/c", "datetime"),
        ("active-at=now&datetime=2025-01-01T00:00:00Z", "active-at"), ("f=xml", "f"), ("limit=5&limit=6", "limit"), ("colour=red", "colour"),
        ("bbox-crs=EPSG:4326", "bbox-crs"),
    ])
    func everyMistakeIsA400ThatNamesTheParameter(query: String, parameter: String) async throws {
        try await ServeFixture.serving { f in
            let a = try await f.get("/collections/incidents/items?" + query)
            #expect(a.status == 400, "\(query): \(a.status) \(a.body)")
            #expect(a.contentType == "application/problem+json")
            #expect(a.json["status"] as? Int == 400)
            #expect((a.json["title"] as? String)?.contains("'\(parameter)'") == true, "\(query): \(a.body)")
            #expect(((a.json["detail"] as? String)?.count ?? 0) > 20, "a detail a person can act on")
        }
    }

    @Test func otherResourcesRefuseUnknownParametersMethodsAndPaths() async throws {
        try await ServeFixture.serving { f in
            for path in ["/conformance?x=1", "/collections?limit=5", "/api?bbox=1,2,3,4", "/collections/incidents/items/1?limit=2",
                         "/collections/incidents/events?limit=3", "/?f=json&limit=3"] {
                let a = try await f.get(path)
                #expect(a.status == 400 && a.contentType == "application/problem+json", "\(path): \(a.status)")
            }
            // (HTTP clients escape a stray %, so the malformed query is checked where it is read.)
            #expect(throws: Problem.self) { try QueryParameters("q=%zz") }
            #expect(try QueryParameters("q=K%C3%B6ln+S%C3%BCd&road=A1,A3").items.map(\.value) == ["Köln Süd", "A1,A3"])
            let post = try await f.get("/collections/incidents/items", method: .POST)
            #expect(post.status == 405 && post.headers.first(name: "allow") == "GET, HEAD")
            let nothing = try await f.get("/collections/roads")
            #expect(nothing.status == 404 && nothing.contentType == "application/problem+json")
            let long = try await f.get("/collections/incidents/items?q=" + String(repeating: "a", count: 9000))
            #expect(long.status == 414)
            let escape = try await f.get("/map/leaflet/..%2F..%2F..%2Fetc%2Fpasswd")
            #expect(escape.status == 404)
            let dots = try await f.get("/map/leaflet/../../../etc/passwd")
            #expect(dots.status == 404 && !dots.body.contains("root:"))
            // Any method but GET and HEAD is a 405 on any path (the server is read-only), and
            // counted; a path one segment longer than a route is nothing.
            let put = try await f.get("/nowhere", method: .PUT)
            #expect(put.status == 405 && put.headers.first(name: "allow") == "GET, HEAD")
            let deeper = try await f.get("/collections/incidents/items/1/more")
            #expect(deeper.status == 404 && deeper.contentType == "application/problem+json", "\(deeper.body)")
            #expect((deeper.json["detail"] as? String)?.contains("/collections/incidents/items/1/more") == true, "\(deeper.body)")
        }
    }

    @Test("Routing: a trailing slash is not part of a path, and HEAD is GET without its body")
    func trailingSlashesAndHead() async throws {
        try await ServeFixture.serving { f in
            for path in ["/collections/", "/collections/incidents/", "/collections/incidents/items/?limit=1", "//conformance", "/collections/incidents/items/1/"] {
                let a = try await f.get(path)
                #expect(a.status == 200, "\(path): \(a.status) \(a.body.prefix(200))")
            }
            let get = try await f.get("/collections/incidents/items?limit=2")
            let head = try await f.get("/collections/incidents/items?limit=2", method: .HEAD)
            #expect(head.status == 200 && head.body.isEmpty && head.contentType == get.contentType)
            #expect(head.headers.first(name: "etag") == get.headers.first(name: "etag"))
            let missing = try await f.get("/nothing-here", method: .HEAD)
            #expect(missing.status == 404 && missing.body.isEmpty)
        }
    }

    @Test func anUnchangedAnswerIs304ForItsETag() async throws {
        try await ServeFixture.serving { f in
            let url = "/collections/incidents/items?bbox=6.8,50.8,7.2,51.1&limit=50"
            let first = try await f.get(url)
            let tag = try #require(first.headers.first(name: "etag"))
            #expect(first.headers.first(name: "cache-control") == "no-cache")
            let again = try await f.get(url, headers: [("If-None-Match", tag)])
            #expect(again.status == 304 && again.body.isEmpty)
            // An ingest changes an incident in view: the tag changes.
            _ = try await f.writer.ingest(source: "desk", now: Date()) { emit in
                try emit(.incident(Incident(source: "desk", id: "k0", title: "A1 : Köln - Olpe, changed", road: "A1",
                                            position: Coordinate(latitude: 50.85, longitude: 6.85), positionSource: PositionSource(kind: .feed))))
            }
            let changed = try await f.get(url, headers: [("If-None-Match", tag)])
            #expect(changed.status == 200 && changed.headers.first(name: "etag") != tag)
        }
    }

    @Test func theMapPageIsServedWithLeafletFromThisServer() async throws {
        try await ServeFixture.serving { f in
            let page = try await f.get("/collections/incidents/items?f=html&bbox=6.8,50.8,7.2,51.1&road=A4")
            #expect(page.status == 200 && page.contentType.hasPrefix("text/html"))
            #expect(page.body.contains("\"road\":\"A4\""), "the page passes its conditions on")
            #expect(!page.body.contains("unpkg") && !page.body.contains("cdn"), "no CDN")
            let bad = try await f.get("/collections/incidents/items?f=html&limit=0")
            #expect(bad.status == 400)
            if FileManager.default.fileExists(atPath: "/usr/share/javascript/leaflet/leaflet.js") {
                let js = try await f.get("/map/leaflet/leaflet.js")
                #expect(js.status == 200 && js.contentType.hasPrefix("text/javascript") && js.body.contains("Leaflet"))
                let css = try await f.get("/map/leaflet/leaflet.css")
                #expect(css.status == 200)
                // The stylesheet's images are in a folder of their own.
                let icon = try await f.get("/map/leaflet/images/marker-icon.png")
                #expect(icon.status == 200 && icon.contentType == "image/png")
            }
            let injected = try await f.get("/?f=html&q=%3C/script%3E%3Cscript%3Ealert(1)%3C/script%3E")
            #expect(!injected.body.contains("</script><script>alert(1)"), "a parameter cannot end the page's script")
        }
    }
}

/// The request time limit: a query that runs past it is answered 503 while it finishes.
@Suite struct QueryRunnerTests {
    @Test func aSlowQueryIsA503AtTheDeadlineAndAFastOneIsAnswered() async throws {
        let runner = QueryRunner(threads: 3, timeout: .milliseconds(100))
        // The query cannot end before the test has its answer: only a runner that answers at
        // the deadline, without waiting for the query, lets this test finish early (whatever
        // the machine's load).
        let release = DispatchSemaphore(value: 0)
        do {
            _ = try await runner.run { () -> Int in _ = release.wait(timeout: .now() + 120); return 1 }
            Issue.record("the runner waited for the query instead of answering at its deadline")
        } catch let problem as Problem {
            #expect(problem.status == .serviceUnavailable && problem.detail.contains("narrower"))
        }
        release.signal()
        #expect(try await runner.run { 42 } == 42)
        await runner.shutdown()
    }
}
