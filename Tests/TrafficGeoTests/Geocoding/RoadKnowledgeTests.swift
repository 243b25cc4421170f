import Foundation
import Testing
@testable import TrafficGeo
@testable import TrafficGeoFeeds
@testable import TrafficGeoGeocoding
@testable import TrafficGeoModel
@testable import TrafficGeoOutput
@testable import TrafficGeoProjection
@testable import TrafficGeoQuery
@testable import TrafficGeoRoadTitles
@testable import TrafficGeoSQLite
@testable import TrafficGeoSupport

@Suite("Junction knowledge and road-consistent geocoding")
struct RoadKnowledgeTests {
    static let krombach = Coordinate(latitude: 50.9949, longitude: 7.9650)
    static let wenden = Coordinate(latitude: 50.9788, longitude: 7.9046)

    // MARK: - Learning

    @Test func learningUndoesTheOffsetsAlongTheDirectionOfTravel() throws {
        // Traffic from Krombach towards Wenden: the stretch starts 0.2 km past Krombach and ends 0.5 km before Wenden.
        let (d, bearing) = Geodesic.inverse(from: Self.krombach, to: Self.wenden)
        let start = Geodesic.direct(from: Self.krombach, bearing: bearing, distance: 200)
        let end = Geodesic.direct(from: Self.krombach, bearing: bearing, distance: d - 500)
        let message = TrafficMessageParser.parse(title: "A4 | Krombach - Wenden",
                                                 text: "A4: Olpe -> Köln, zwischen 0.2 km hinter AS Krombach und 0.5 km vor AS Wenden Stau")
        let observations = JunctionLearner.observations(message, road: nil, position: start, segment: [start, end], origin: "feed")
        #expect(observations.map(\.name) == ["Krombach", "Wenden"])
        #expect(observations.allSatisfy { $0.road == "A4" && $0.kind == .exit })
        #expect(Geodesic.distance(from: observations[0].coordinate, to: Self.krombach) < 1)
        #expect(Geodesic.distance(from: observations[1].coordinate, to: Self.wenden) < 1)
        // Without a segment the direction is unknown: a 0.2 km offset is taken as the point, a longer one not at all.
        let pointOnly = JunctionLearner.observations(message, road: nil, position: start, segment: nil, origin: "feed")
        #expect(pointOnly.map(\.name) == ["Krombach"])
        let far = TrafficMessageParser.parse(title: "A4 | Krombach - Wenden", text: "A4: Olpe -> Köln, zwischen 2.0 km hinter AS Krombach und 0.5 km vor AS Wenden")
        #expect(JunctionLearner.observations(far, road: nil, position: start, segment: nil, origin: "feed").isEmpty)
    }

    @Test func oneFarEstimateDoesNotMoveAJunction() throws {
        var observations = (0..<5).map { i in
            JunctionObservation(road: "A4", name: "Krombach", kind: .exit,
                                coordinate: Geodesic.direct(from: Self.krombach, bearing: Double(i) * 72, distance: 50), origin: "feed")
        }
        observations.append(JunctionObservation(road: "A4", name: "AS Krombach", kind: .exit,
                                                coordinate: Coordinate(latitude: 50.08319, longitude: 9.20609), origin: "feed"))
        let j = try #require(JunctionLearner.aggregate(observations))
        #expect(Geodesic.distance(from: j.coordinate, to: Self.krombach) < 60)
        #expect(j.support == 5 && j.spreadMeters < 60 && j.isWellAttested)
        #expect(JunctionName.key("AK Bayreuth / Kulmbach") == JunctionName.key("Kreuz Bayreuth/Kulmbach"))
        #expect(JunctionName.key("Autobahnkreuz Heidelberg") == "heidelberg")
    }

    /// Autobahn API warnings with positions between Krombach and Wenden, as the live API sends them.
    static func autobahnHistory(count: Int, idPrefix: String = "w") -> String {
        let (d, bearing) = Geodesic.inverse(from: krombach, to: wenden)
        let items = (0..<count).map { i -> String in
            let after = 0.1 + Double(i % 5) * 0.3, before = 0.2 + Double(i % 3) * 0.4
            let start = Geodesic.direct(from: krombach, bearing: bearing, distance: after * 1000)
            let end = Geodesic.direct(from: krombach, bearing: bearing, distance: d - before * 1000)
            return """
                {"identifier":"\(idPrefix)\(i)","title":"A4 | Krombach - Wenden","subtitle":"Olpe -> Köln",
                 "description":["Beginn: 05.10.22","A4: Olpe -> Köln, zwischen \(after) km hinter AS Krombach und \(before) km vor AS Wenden","Stau"],
                 "coordinate":{"lat":"\(start.latitude)","long":"\(start.longitude)"},
                 "extent":"\(start.latitude),\(start.longitude),\(end.latitude),\(end.longitude)","startTimestamp":"2022-10-05T21:30:00+02:00"}
                """
        }
        return "{\"warning\":[" + items.joined(separator: ",") + "]}"
    }

    @Test func theStoreLearnsJunctionsAndAnswersTitlesWithoutAskingAGeocoder() async throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteIncidentStore(path: folder.appendingPathComponent("db.sqlite").path)
        let history = try TestSupport.write(Self.autobahnHistory(count: 6), name: "history.json", in: folder)
        let first = try await FeedIngestor(store: store, sourceName: "api").ingest(history.path)
        #expect(first.junctionObservations == 12)
        var known = try await store.knownJunctions(roads: ["A4"])
        #expect(Set(known.map(\.name)) == ["Krombach", "Wenden"])
        let krombach = try #require(known.first { $0.name == "Krombach" })
        #expect(Geodesic.distance(from: krombach.coordinate, to: Self.krombach) < 2 && krombach.support == 6)
        // Reading the same feed again replaces its own estimates: the support does not grow.
        _ = try await FeedIngestor(store: store, sourceName: "api").ingest(history.path)
        known = try await store.knownJunctions(roads: ["A4"])
        #expect(known.first { $0.name == "Krombach" }?.support == 6)

        // A later message with words only: placed from the knowledge; the geocoder is never asked for a junction.
        let server = try LoopbackHTTPServer { request, _ in .json(GeocoderFixtures.nominatimJSONv2(q: request.query["q"] ?? "")) }
        defer { server.shutdown() }
        let atom = try TestSupport.write("""
            <feed xmlns="http://www.w3.org/2005/Atom"><entry><id>later</id><title>A4 : Krombach - Wenden</title>
            <summary>A4: Olpe -&gt; Köln, zwischen 1.0 km hinter AS Krombach und 0.3 km vor AS Wenden Unfall</summary></entry></feed>
            """, name: "later.xml", in: folder)
        _ = try await FeedIngestor(store: store, sourceName: "atom").ingest(atom.path)
        let service = GeocodingService(providers: [try NominatimProvider(baseURL: server.baseURL)], cache: store)
        let run = try await PendingGeocoder(store: store, locator: IncidentLocator(service: service)).run()
        #expect(run.found[.junction] == 1)
        let placed = try await #require(try store.allIncidents().first { $0.incident.id == "later" }?.incident)
        let position = try #require(placed.position)
        #expect(abs(Geodesic.distance(from: Self.krombach, to: position) - 1000) < 20)
        #expect((placed.positionSource?.confidence ?? 0) >= 0.9)
        #expect(!server.requests.contains { ["Krombach", "Wenden"].contains($0.query["q"] ?? "") })
    }

    @Test func aFarNamesakeIsRefusedAndTheNamePlacedBetweenItsNeighbours() async throws {
        // "Hasselberg" exists only far away (as the gazetteer knows it); its neighbours on the road are near Kassel.
        let places: [String: (Double, Double)] = [
            "Malsfeld": (51.0906, 9.5353), "Homberg (Efze)": (51.0298, 9.4035), "Homberg": (51.0298, 9.4035), "Melsungen": (51.1300, 9.5500),
            "Hasselberg": (54.6840, 9.8170), "Kassel": (51.3127, 9.4797), "Würzburg": (49.7913, 9.9534),
        ]
        let server = try LoopbackHTTPServer { request, _ in
            let q = request.query["q"] ?? ""
            guard let (lat, lon) = places[q] else { return .json("[]") }
            return .json("[" + GeocoderFixtures.nominatimPlace(q, lat: lat, lon: lon, category: "place", type: "village", importance: 0.3) + "]")
        }
        defer { server.shutdown() }
        let locator = IncidentLocator(service: GeocodingService(providers: [try NominatimProvider(baseURL: server.baseURL)]))
        let items = [
            ("A7 | Melsungen - Malsfeld", "A7: Kassel -> Würzburg, zwischen 1.0 km hinter AS Melsungen und 2.0 km vor AS Malsfeld Stau"),
            ("A7 | Malsfeld - Hasselberg", "A7: Kassel -> Würzburg, zwischen 1.0 km hinter AS Malsfeld und 2.0 km vor Hasselberg Stau"),
            ("A7 | Hasselberg - Homberg (Efze)", "A7: Kassel -> Würzburg, zwischen 0.5 km hinter Hasselberg und 2.0 km vor AS Homberg (Efze) Stau"),
        ].enumerated().map { RoadResolver.Item(id: Int64($0.offset), message: TrafficMessageParser.parse(title: $0.element.0, text: $0.element.1)) }
        let outcome = await RoadResolver(locator: locator).resolve(road: "A7", items: items, knowledge: RoadKnowledge())
        let malsfeld = Coordinate(latitude: 51.0906, longitude: 9.5353)
        for item in items {
            let found = try #require(try outcome.results[item.id]?.get())
            #expect(Geodesic.distance(from: found.position, to: malsfeld) < 20_000, "\(item.message.from?.name ?? "")")
        }
        let hasselberg = try #require(try outcome.results[2]?.get())
        #expect(hasselberg.precision == .road && hasselberg.confidence < 0.5)
        #expect(try outcome.results[0]?.get()?.precision == .town)
    }

    @Test func withoutAnyNeighbourAnAmbiguousFarPlaceIsNotGuessed() async throws {
        // The road is known to run near Kassel; the only "Hasselberg" is 400 km north.
        let server = try LoopbackHTTPServer { request, _ in
            request.query["q"] == "Hasselberg"
                ? .json("[" + GeocoderFixtures.nominatimPlace("Hasselberg", lat: 54.684, lon: 9.817, category: "place", type: "village") + "]")
                : .json("[]")
        }
        defer { server.shutdown() }
        let locator = IncidentLocator(service: GeocodingService(providers: [try NominatimProvider(baseURL: server.baseURL)]))
        var knowledge = RoadKnowledge()
        knowledge.positions = (0..<20).map { Coordinate(latitude: 50.9 + Double($0) * 0.02, longitude: 9.5) }
        let item = RoadResolver.Item(id: 1, message: TrafficMessageParser.parse(title: "A7 : Hasselberg - Hasselberg", text: "A7: Kassel -> Würzburg, 1.0 km vor Hasselberg Stau"))
        let outcome = await RoadResolver(locator: locator).resolve(road: "A7", items: [item], knowledge: knowledge)
        #expect(try outcome.results[1]?.get() == nil)
    }

    // MARK: - Positions checked against their words

    @Test func zeroZeroIsNoPositionAndASwappedPositionIsSwappedBack() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteIncidentStore(path: folder.appendingPathComponent("db.sqlite").path)
        _ = try FeedIngestor(store: store, sourceName: "api").ingest(FeedInput(localFile: try TestSupport.write(Self.autobahnHistory(count: 5), name: "h.json", in: folder).path))
        let start = Geodesic.direct(from: Self.krombach, bearing: Geodesic.inverse(from: Self.krombach, to: Self.wenden).bearing, distance: 300)
        let text = "A4: Olpe -> Köln, zwischen 0.3 km hinter AS Krombach und 0.5 km vor AS Wenden"
        let feed = """
            {"warning":[
             {"identifier":"zero","title":"A4 | Krombach - Wenden","description":["\(text)"],"coordinate":{"lat":"0","long":"0"},"extent":"0,0,0,0","point":"0,0"},
             {"identifier":"swapped","title":"A4 | Krombach - Wenden","description":["\(text)"],"coordinate":{"lat":\(start.longitude),"long":\(start.latitude)}},
             {"identifier":"far","title":"A4 | Krombach - Wenden","description":["\(text)"],"coordinate":{"lat":\(start.latitude + 1),"long":\(start.longitude)}}
            ]}
            """
        let summary = try FeedIngestor(store: store, sourceName: "later").ingest(FeedInput(localFile: try TestSupport.write(feed, name: "l.json", in: folder).path))
        #expect(summary.withoutPosition == 1)
        #expect(summary.positionConflicts.map(\.id).sorted() == ["far", "swapped"])
        #expect(summary.positionConflicts.first { $0.id == "swapped" }?.swapped == true)
        #expect(summary.positionConflicts.first { $0.id == "far" }?.swapped == false)
        let byID = Dictionary(uniqueKeysWithValues: try store.allIncidents().map { ($0.incident.id, $0.incident) })
        #expect(byID["zero"]?.position == nil)
        let swapped = try #require(byID["swapped"]?.position)
        #expect(Geodesic.distance(from: swapped, to: start) < 1)
        #expect(byID["swapped"]?.properties["position_note"]?.contains("swapped") == true)
        // Neither contradicted position taught the store anything.
        #expect(try store.knownJunctions(roads: ["A4"]).first { $0.name == "Krombach" }?.support == 5)
        #expect(try store.checkIntegrity().isEmpty)
        let near = try QueryEngine(store: store).nearest(to: start, limit: 10)
        #expect(near.contains { $0.incident.id == "swapped" })
    }

    // MARK: - Exchange

    @Test func junctionsRoundTripThroughGeoJSONAndCSVAndOSMExportsImport() throws {
        let j = KnownJunction(road: "A4", name: "Kreuz Olpe-Süd", kind: .interchange, coordinate: Self.krombach, support: 7, spreadMeters: 120.5, learnedFrom: "feed")
        for format in JunctionExchange.Format.allCases {
            let text = format == .csv ? JunctionExport.csv([j]) : JunctionExport.geoJSON([j])
            let back = try JunctionExchange.read(Data(text.utf8), format: format, origin: "import:test")
            #expect(back.count == 1 && back[0].road == "A4" && back[0].name == j.name && back[0].kind == .interchange)
            #expect(Geodesic.distance(from: back[0].coordinate, to: j.coordinate) < 0.01)
        }
        // `osmium export` of highway=motorway_junction nodes: ref is the exit number, the road is unknown.
        let osm = """
            {"type":"FeatureCollection","features":[
            {"type":"Feature","geometry":{"type":"Point","coordinates":[8.6349536,49.4115105]},"properties":{"ref":"37","name":"Kreuz Heidelberg","highway":"motorway_junction"}},
            {"type":"Feature","geometry":{"type":"Point","coordinates":[8.6462486,49.4491047]},"properties":{"ref":"36","name":"Dossenheim","highway":"motorway_junction"}},
            {"type":"Feature","geometry":{"type":"Point","coordinates":[8.6,49.4]},"properties":{"highway":"motorway_junction"}}]}
            """
        let nodes = try JunctionExchange.read(Data(osm.utf8), format: .geojson, origin: "import:x")
        #expect(nodes.map(\.name) == ["Kreuz Heidelberg", "Dossenheim"])
        #expect(nodes.allSatisfy { $0.road == "" && $0.origin == "import:osm" })
        #expect(nodes[0].kind == .interchange)
        #expect(throws: JunctionExchange.ReadError.self) { try JunctionExchange.read(Data("name,lat\nX,1".utf8), format: .csv, origin: "x") }
        #expect(throws: JunctionExchange.ReadError.self) { try JunctionExchange.read(Data("[1,2]".utf8), format: .geojson, origin: "x") }
    }

    @Test func importedJunctionsReplaceTheirOwnRowsWhenImportedAgain() throws {
        let folder = TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteIncidentStore(path: folder.appendingPathComponent("db.sqlite").path)
        let two = [Self.krombach, Geodesic.direct(from: Self.krombach, bearing: 90, distance: 100)].map {
            JunctionObservation(road: "", name: "Kreuz Krombach", kind: .interchange, coordinate: $0, origin: "import:osm")
        }
        try store.recordJunctionObservations(two, observer: "import:j.geojson", replacing: true)
        #expect(try store.knownJunctions().first?.support == 2)
        try store.recordJunctionObservations(Array(two.prefix(1)), observer: "import:j.geojson", replacing: true)
        #expect(try store.knownJunctions().first?.support == 1)
        try store.recordJunctionObservations([], observer: "import:j.geojson", replacing: true)
        #expect(try store.knownJunctions().isEmpty)
    }

    @Test func aJunctionNameEndsBeforeTheNextRoadReference() {
        let m = TrafficMessageParser.parse(title: "A8 | Neunkirchen/Spiesen - Kohlhof",
                                           text: "A8: Saarlouis -> Neunkirchen, zwischen 2.3 km hinter AS Neunkirchen/Spiesen und 1.0 km vor Kohlhof A8 Saarlouis - Neunkirchen Gefahr")
        #expect(m.from?.name == "Neunkirchen/Spiesen")
        #expect(m.to?.name == "Kohlhof")
    }
}
